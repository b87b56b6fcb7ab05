"""The viewer's data (report/viewer.py) from real run directories, its escaping, and `extractbench view`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _runs import DATASET, Page, fixture_outputs, make_run, repeated_run
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.cli import main
from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.dataset.sources import load_source
from pytest_extractbench.gating.baseline import SampleSnapshot
from pytest_extractbench.gating.repeated import compare_repeats
from pytest_extractbench.report import viewer, viewer_document
from pytest_extractbench.report.rows import read_run
from pytest_extractbench.scoring import StatsOptions

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("viewer")
    return (
        make_run(base / "current", {"good": fixture_outputs("demo.jsonl"), "weak": fixture_outputs("weak.jsonl")}),
        make_run(base / "baseline", {"good": fixture_outputs("weak.jsonl")}, samples=DATASET.samples[:10]),
    )


def data_of(*paths: Path) -> dict:
    return viewer_document.viewer_data(viewer.runs_from_dirs(list(paths)))


def test_columns_samples_and_the_first_sample_in_full(runs: tuple[Path, Path]) -> None:
    data = data_of(*runs)
    assert data["columns"] == [
        {"run": "current", "model": "good"},
        {"run": "current", "model": "weak"},
        {"run": "baseline", "model": "good"},
    ]
    assert [s[0] for s in data["samples"]] == [s.id for s in DATASET.samples]
    first = DATASET.samples[0]  # appendix-a-1: John Smith, 35, software engineer at TechCorp
    assert data["samples"][0] == [first.id, "people", "simple", "Software engineer profile"]
    text, schema, gold, fields = data["details"][0]
    assert text == first.text and json.loads(gold) == first.expected
    assert json.loads(data["strings"][schema]) == first.schema
    S = data["strings"]
    assert {S[fields[i]]: S[fields[i + 1]] for i in range(0, len(fields), 2)} == {
        "name": "John Smith",
        "age": "35",
        "occupation": "software engineer",
        "company": "TechCorp",
    }
    # demo.jsonl answers it exactly; weak.jsonl's answer is cut off: invalid, every field missed
    good, weak, baseline = (data["results"][k][0] for k in range(3))
    assert good[:3] == [1.0, 1, None] and good[3] == fixture_outputs("demo.jsonl")[first.id]
    assert all(good[5][i + 1] == 0 and good[5][i + 3] == -1 for i in range(0, len(good[5]), 4))
    # its parse error is said once, as why nothing could be read, not again among the problems
    assert weak[1] == 0 and weak[2] == "invalid" and weak[0] == 0.0 and "JSON" in weak[6] and weak[4] == []
    assert good[6] is None and good[7] == 1 and weak[7] == 0
    assert [weak[5][i + 1] for i in range(0, len(weak[5]), 4)] == [viewer.CATEGORIES.index("missed")] * 4
    assert baseline[3] == fixture_outputs("weak.jsonl")[first.id]
    # the baseline run scored 10 samples: the others have no result in its column
    assert data["results"][2][10:] == [None] * (len(DATASET.samples) - 10)
    assert data["notes"] == []


def test_buckets_against_the_same_model_in_the_other_run(runs: tuple[Path, Path]) -> None:
    data = data_of(*runs)
    names = data["bucket_names"]
    # only the current run's "good" has a counterpart (the baseline's "good"); "weak" and the baseline have none
    assert data["buckets"][1] is None and data["buckets"][2] is None and data["buckets"][0]["against"] == "baseline"
    now, then = data["results"][0], data["results"][2]
    for row, bucket in enumerate(data["buckets"][0]["rows"]):
        if then[row] is None:
            want = "new"
        elif then[row][7] and not now[row][7]:
            want = "regressed"
        elif not then[row][7]:
            want = "fixed" if now[row][7] else "still_failing"
        else:
            want = "regressed" if then[row][0] - now[row][0] > 0.05 else "unchanged"
        assert names[bucket] == want, data["samples"][row][0]
    assert {names[b] for b in data["buckets"][0]["rows"][:10]} >= {"fixed"}


def test_the_runs_own_baseline_buckets_come_first(runs: tuple[Path, Path], tmp_path: Path) -> None:
    moved = tmp_path / "current"
    moved.mkdir()
    (moved / "samples.jsonl").write_bytes((runs[0] / "samples.jsonl").read_bytes())
    document = json.loads((runs[0] / "metrics.json").read_text(encoding="utf-8"))
    ids = [s.id for s in DATASET.samples]
    document["baseline_comparison"] = {
        "models": {
            "weak": {
                "buckets": {
                    "counts": {},
                    "samples": {"regressed": [ids[3], ids[5]], "fixed": [ids[0]], "removed": ["gone"]},
                }
            }
        }
    }
    (moved / "metrics.json").write_text(json.dumps(document), encoding="utf-8")
    data = data_of(moved)
    names = data["bucket_names"]
    assert data["buckets"][0] is None  # "good" was not compared with a baseline
    weak = data["buckets"][1]
    assert weak["against"] == "the run's baseline"
    assert [names[b] for b in weak["rows"]] == [
        "regressed" if i in (3, 5) else "fixed" if i == 0 else "unchanged" for i in range(len(ids))
    ]


def test_a_dataset_file_that_is_gone_leaves_scores_and_outputs(runs: tuple[Path, Path], tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "metrics.json").write_bytes((runs[1] / "metrics.json").read_bytes())
    records = [
        {**r, "meta": {**r["meta"], "source": str(tmp_path / "gone.jsonl")}}
        for r in iter_samples(runs[1] / "samples.jsonl")
    ]
    (moved / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    data = data_of(moved)
    assert data["notes"] == [
        f"dataset {tmp_path / 'gone.jsonl'}: not readable here, so source text, schema and gold are not shown"
    ]
    assert all(d[0] is None and d[1] == -1 and d[2] is None for d in data["details"])
    assert len(data["details"][0][3]) == 8  # the gold's four fields still come from the field results
    assert [r[3] for r in data["results"][0]] == [fixture_outputs("weak.jsonl")[s.id] for s in DATASET.samples[:10]]


@given(st.text())
def test_embedded_json_cannot_close_its_element_and_reads_back(text: str) -> None:
    embedded = viewer.embed_json({"t": text, "x": ["</script><!--", text]})
    assert not {"<", ">", "&"} & set(embedded)
    assert json.loads(embedded) == {"t": text, "x": ["</script><!--", text]}


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=600) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=1500,
)


@pytest.mark.slow
@given(_JSON)
def test_embedded_json_in_pieces_is_the_same_text(data: object) -> None:
    # the page is written piece by piece (report/html.py): the pieces must join to exactly embed_json's text
    assert "".join(viewer.embed_json_parts(data)) == viewer.embed_json(data)


def test_the_session_lends_its_samples_and_the_data_stays_the_same(runs: tuple[Path, Path], monkeypatch) -> None:
    run = read_run(runs[0])
    read = viewer_document.viewer_data([viewer.ViewerRun("current", run)])
    (source,) = {r["meta"]["source"] for r in iter_samples(runs[0] / "samples.jsonl")}
    run.samples = {source: load_source(source).samples}
    monkeypatch.setattr(viewer, "load_source", lambda *a, **k: pytest.fail("the dataset was read again"))
    assert viewer_document.viewer_data([viewer.ViewerRun("current", run)]) == read


@pytest.mark.slow
def test_the_streamed_page_is_the_rendered_page(runs: tuple[Path, Path], tmp_path: Path) -> None:
    from pytest_extractbench.report import html

    context = html.build_context(read_run(runs[0]))
    assert isinstance(context["viewer"]["json"], viewer.EmbeddedJson)
    html._write_page("report.html.j2", context, tmp_path / "report.html")
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == html.render(context)


def test_view_writes_the_page_and_names_every_run(runs: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "v.html"
    assert main(["view", *map(str, runs), "--output", str(out), "--no-browser"]) == 0
    assert capsys.readouterr().out == f"viewer written to {out}\n"
    text = out.read_text(encoding="utf-8")
    page = Page(text)
    assert "<h1>Samples: current vs baseline</h1>" in text and "current (current), baseline" in text
    data = viewer.unpack(text.split('id="viewer-data" data-encoding="gzip-base64">', 1)[1].split("</script>", 1)[0])
    assert [c["run"] for c in data["columns"]] == ["current", "current", "baseline"]
    assert [a for t, a in page.tags if t == "script"] == [
        {"type": "application/json", "id": "viewer-data", "data-encoding": "gzip-base64"},
        {},
        {"type": "application/json", "id": "viewer-body", "data-encoding": "gzip-base64"},
    ]


def test_the_head_holds_what_the_first_rows_show_and_the_body_the_rest(runs: tuple[Path, Path]) -> None:
    data = data_of(*runs)
    head, body = viewer.split(data)
    assert set(body) == {"strings", "details", "results"} and not set(body) & set(head)
    assert {**head, **body}.keys() - {"scores"} == data.keys()
    for k, column in enumerate(data["results"]):
        assert head["scores"][k] == [[r and r[0] for r in column], [r and r[1] for r in column]]
    assert head["scores"][2][0][10:] == [None] * (len(DATASET.samples) - 10)  # the baseline scored 10


@pytest.mark.slow
def test_view_opens_the_browser_the_environment_names(runs: tuple[Path, Path], tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    browser = tmp_path / "browser.sh"  # a real program as $BROWSER: it records the address it is given
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {seen}\n', encoding="utf-8")
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "BROWSER": str(browser), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_extractbench", "view", str(runs[0])],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    page = runs[0] / "viewer.html"
    assert done.stdout == f"viewer opened in a browser: {page}\n"
    assert seen.read_text() == page.resolve().as_uri() and page.is_file()


@pytest.mark.slow
def test_view_without_a_browser_prints_the_path_and_a_bad_run_exits_2(runs, tmp_path: Path, capsys) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")}
    env["PATH"] = str(tmp_path)  # no browser program to find
    done = subprocess.run(
        [sys.executable, "-m", "pytest_extractbench", "view", str(runs[1]), "--output", str(tmp_path / "v.html")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**env, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0 and done.stdout == f"viewer written to {tmp_path / 'v.html'}\n", done.stderr
    assert main(["view", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err == (
        f"extractbench view: {tmp_path / 'nowhere' / 'metrics.json'}: no such file "
        f"(is {tmp_path / 'nowhere'} a run directory?)\n"
    )


def test_the_dataset_is_read_again_with_the_runs_column_mapping(tmp_path: Path) -> None:
    lines = Path(DATASET.source).read_text(encoding="utf-8").splitlines()[:3]
    rows = [{("document" if k == "text" else k): v for k, v in json.loads(line).items()} for line in lines]
    data = tmp_path / "renamed.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    samples = load_source(str(data), columns={"text": "document"}).samples
    run = make_run(tmp_path / "run", {"good": fixture_outputs("demo.jsonl")}, samples=samples)
    unmapped = viewer_document.viewer_data(viewer.runs_from_dirs([run]))
    assert [d[0] for d in unmapped["details"]] == [None] * 3  # without the mapping no row has a text
    assert unmapped["notes"] == [
        "3 of 3 samples are not in the dataset file now: their source text, schema and gold are not shown"
    ]
    document = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    document["run"]["options"]["data"] = {"columns": {"text": "document"}}
    (run / "metrics.json").write_text(json.dumps(document), encoding="utf-8")
    mapped = viewer_document.viewer_data(viewer.runs_from_dirs([run]))
    assert [d[0] for d in mapped["details"]] == [r["document"] for r in rows] and mapped["notes"] == []


_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.text(min_size=viewer.MAX_VALUE - 2, max_size=viewer.MAX_VALUE + 2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@pytest.mark.slow
@given(st.lists(_VALUES, max_size=12))
def test_a_field_value_gets_the_index_of_its_json_text_and_the_table_grows_as_with_json_text(values) -> None:
    memo, plain = viewer.StringTable(), viewer.StringTable()
    for value in values * 2:  # every value seen twice: the second time is found in the table
        assert memo.value(value) == plain(viewer.json_text(value))
    assert memo.items == plain.items


@pytest.mark.slow
@given(
    st.lists(
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
            lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
            max_leaves=30,
        ),
        max_size=80,
    )
)  # past viewer.ENCODED_TOGETHER (32)
def test_list_elements_encoded_together_are_the_elements_encoded_one_by_one(items) -> None:
    assert viewer.encode_elements(items) == ",".join(map(viewer.ENCODER.encode, items))


@pytest.mark.slow
@given(_JSON)
def test_the_packed_data_in_pieces_unpacks_to_the_data(data: object) -> None:
    # the page's data element: gzip in base64, written piece by piece; joined, it is one base64 text
    pieces = list(viewer.EmbeddedJson(data).parts())
    joined = "".join(pieces)
    assert joined == viewer.EmbeddedJson(data).__html__() and not {"<", ">", "&"} & set(joined)
    assert viewer.unpack(joined) == json.loads(viewer.embed_json(data))


def test_large_data_is_packed_in_pieces_that_join(monkeypatch) -> None:
    monkeypatch.setattr(viewer, "_PACKED_PIECE", 3 * 5_000)  # many pieces: each a whole number of base64 groups
    data = {"strings": [os.urandom(500).hex() for _ in range(1000)]}  # 1 MB that compresses little
    pieces = list(viewer.EmbeddedJson(data).parts())
    assert len(pieces) > 1 and all(len(p) % 4 == 0 and "=" not in p for p in pieces[:-1])
    assert viewer.unpack("".join(pieces)) == data


def test_a_similarity_paired_list_carries_its_elements_for_the_field_diff(tmp_path: Path) -> None:
    """With --extractbench-list-similarity, a list field's elements reach the viewer: kind, both sides, the
    similarity of a pair made by it; without the option, none."""
    from pytest_extractbench import ScoringOptions, StatsOptions
    from pytest_extractbench.dataset.samples import Sample
    from pytest_extractbench.report.viewer import ELEMENT_KINDS

    schema = {"type": "object", "properties": {"parties": {"type": "array", "items": {"type": "string"}}}}
    gold = {"parties": ["Newgistics, Inc.", "Acme Holdings LLC", "Zeta"]}
    output = json.dumps({"parties": ["Omega", "Newgistics Inc.", "ACME HOLDINGS LLC"]})
    samples = [Sample(id="nda", text="...", schema=schema, expected=gold)]
    similar = ScoringOptions(list_similarity=0.8, statistics=StatsOptions(resamples=100))
    with_pairs = make_run(tmp_path / "on", {"m": lambda s: output}, samples=samples, options=similar)
    without = make_run(
        tmp_path / "off", {"m": lambda s: output}, samples=samples, options=similar.replace(list_similarity=None)
    )

    def elements(run: Path) -> list[tuple[str, str, str | None, str | None, float]]:
        data = viewer_document.viewer_data(viewer.runs_from_dirs([run]), with_dataset=False)
        strings = data["strings"]
        flat = data["results"][0][0][8]
        return [
            (
                strings[flat[j]],
                ELEMENT_KINDS[flat[j + 1]],
                strings[flat[j + 2]] if flat[j + 2] >= 0 else None,
                strings[flat[j + 3]] if flat[j + 3] >= 0 else None,
                flat[j + 4],
            )
            for j in range(0, len(flat), 5)
        ]

    assert elements(with_pairs) == [
        ("parties", "similar", "Newgistics, Inc.", "Newgistics Inc.", round(15 / 16, 3)),
        ("parties", "exact", "Acme Holdings LLC", "ACME HOLDINGS LLC", -1),
        ("parties", "missed", "Zeta", None, -1),
        ("parties", "spurious", None, "Omega", -1),
    ]
    assert elements(without) == []


def test_pass_at_k_and_pass_hat_k_deltas_against_the_other_run(tmp_path: Path) -> None:
    ids = [s.id for s in DATASET.samples[:8]]
    # this run: the first six samples pass 2 of 3 runs, the last two 3 of 3; the other run: 3 of 3 everywhere
    now = repeated_run(tmp_path / "now", {i: (3, 2 if n < 6 else 3) for n, i in enumerate(ids)})
    then = repeated_run(tmp_path / "then", {i: (3, 3) for i in ids})
    data = data_of(now, then)
    assert data["passes"][0] == [[3, 2]] * 6 + [[3, 3]] * 2 and data["passes"][1] == [[3, 3]] * 8
    (found,) = data["repeats"]
    assert (found["column"], found["against"], found["k"], found["samples"]) == (0, 1, 3, 8)
    hat, at = found["metrics"]["pass_hat_k"], found["metrics"]["pass_at_k"]
    # pass^3 per sample: C(2,3)/C(3,3) = 0 on six, 1 on two -> 2/8; the exact permutation test over 2^8 swaps
    assert (hat["b"], hat["a"], hat["delta"]) == (1.0, 0.25, -0.75)
    assert hat["p"] == "p = 0.031" and hat["significant"] is True
    assert (at["b"], at["a"], at["delta"], at["significant"]) == (1.0, 1.0, 0.0, False)
    # the same counts through a baseline comparison's own statistics: one implementation
    snapshots = [
        {str(r): SampleSnapshot({}, repeats=tuple(c)) for r, c in enumerate(data["passes"][k])} for k in (0, 1)
    ]
    direct = compare_repeats(
        *snapshots, sorted(snapshots[0]), StatsOptions(resamples=500), keeps_repeats=True, rng=np.random.default_rng(0)
    )
    assert direct.deltas["pass_hat_k"].delta == hat["delta"] and direct.k == found["k"]


def test_repeats_in_one_run_only_give_a_note_and_no_delta(tmp_path: Path) -> None:
    ids = [s.id for s in DATASET.samples[:8]]
    now = repeated_run(tmp_path / "now", {i: (3, 3) for i in ids})
    once = make_run(
        tmp_path / "once",
        {"m": {s.id: json.dumps(s.expected) for s in DATASET.samples[:8]}},
        samples=DATASET.samples[:8],
    )
    data = data_of(now, once)
    assert data["repeats"] == [] and data["passes"][1] is None
    assert "pass@k / pass^k of m not compared: run once asked each sample once" in data["notes"]
    plain = data_of(once, once.parent / "once")  # neither repeated: nothing said
    assert plain["repeats"] == [] and not any("pass@k" in note for note in plain["notes"])
