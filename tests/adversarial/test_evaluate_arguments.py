"""Hostile arguments to ``evaluate()``: every one is checked before anything is read, asked or written, and a
wrong one is a ``UsageProblem`` naming the argument in the command line's words, never a bare TypeError,
AttributeError or ValueError from deep inside the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_extractbench import UsageProblem, evaluate


class Loud:
    """An object whose repr must never reach a message (it could be huge, or hold a secret)."""

    def __repr__(self) -> str:
        return "sk-SECRET-" + "x" * 10_000


def extractor(sample: Any) -> dict[str, Any]:
    return {}


CASES = {
    "extractor-not-callable": ({"extractor": 42}, "extractor=42: expected a callable"),
    "extractor-a-string": ({"extractor": "mymodule:extract"}, "extractor=str: expected a callable"),
    "dataset-a-number": ({"dataset": 5, "extractor": extractor}, "dataset=5: expected a dataset name or path"),
    "output-a-number": ({"output": 5, "extractor": extractor}, "output=5: expected a directory path"),
    "events-a-string": ({"events": "print", "extractor": extractor}, "events=str: expected a RunEvents"),
    "sla-unknown": ({"sla": "platinum", "extractor": extractor}, "sla='platinum': unknown SLA tier"),
    "sla-a-list": ({"sla": ["target"], "extractor": extractor}, "sla=['target']: expected a string or a number"),
    "model-a-dict": ({"model": {"a": 1}, "extractor": extractor}, "model={'a': 1}: expected a string or a number"),
    "base-url-a-number": ({"base_url": 5, "model": "m"}, "base_url=5: expected an http:// or https:// URL"),
    "sample-a-list": ({"sample": [1], "extractor": extractor}, "sample=[1]: expected a string or a number"),
    "sample-a-bool": ({"sample": True, "extractor": extractor}, "sample=True: expected a string or a number"),
    "timeout-not-finite": (
        {"timeout": float("inf"), "extractor": extractor},
        "timeout=inf: expected a number of seconds",
    ),
    "flag-a-string": ({"no_cache": "no", "extractor": extractor}, "no_cache='no': expected True or False"),
    "seed-an-object": ({"seed": Loud(), "extractor": extractor}, "seed=<Loud>: expected a string or a number"),
    "predictions-a-number": ({"predictions": 5}, "predictions=5"),
}


@pytest.mark.parametrize(("arguments", "message"), list(CASES.values()), ids=list(CASES))
def test_a_wrong_argument_is_a_usage_problem_naming_it(tmp_path: Path, arguments: dict[str, Any], message: str) -> None:
    arguments = dict(arguments)
    args = (arguments.pop("dataset"),) if "dataset" in arguments else ()
    arguments.setdefault("output", tmp_path / "out")
    with pytest.raises(UsageProblem) as caught:
        evaluate(*args, rootdir=tmp_path, **arguments)
    text = str(caught.value)
    assert text.startswith("extractbench: ") and message in text
    assert "\n" not in text and len(text) < 400 and "SECRET" not in text
    assert not (tmp_path / "out").exists() and not (tmp_path / ".extractbench").exists()  # nothing written


def test_the_same_arguments_given_right_run(tmp_path: Path) -> None:
    # the checks refuse types, not values a user may mean: numbers for text options, paths, a callable object
    class Extractor:
        def __call__(self, sample: Any) -> dict[str, Any]:
            return {}

    class Events:
        seen: list[str] = []

        def request_done(self, model: str, sample_id: str, response: Any) -> None:
            self.seen.append(sample_id)

        def sample_scored(self, record: Any) -> None:
            pass

        def run_finished(self, metrics: dict[str, Any]) -> None:
            pass

    events = Events()
    result = evaluate(
        Path("bundled"),
        extractor=Extractor(),
        model=7,
        sample=2,
        seed="3",
        timeout=5,
        sla="none",
        no_cache=True,
        no_html_report=True,
        output=str(tmp_path / "out"),
        rootdir=tmp_path,
        events=events,
    )
    assert result.models == ["7"] and len(result.records) == 2 and len(events.seen) == 2
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["models"]["7"]["num_samples"] == 2
