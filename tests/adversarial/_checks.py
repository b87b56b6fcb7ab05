"""What every hostile-input case asserts, whatever the input: a clean terminal, no secret in any
artifact, and every sample asked accounted for in the run's files."""

from __future__ import annotations

import base64
import json
import re
import zlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pytest_extractbench.core.rundoc import iter_samples

# C0 controls other than tab and newline, DEL, and the C1 range (0x9b is a one-byte CSI).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


# report.html's viewer keeps its data packed (gzip in base64): a secret or control there is invisible to a search
_PACKED = re.compile(r'data-encoding="gzip-base64">([A-Za-z0-9+/=\s]*)</script>')


def unpacked(page: str) -> list[str]:
    """The text of every packed data element of an HTML page, unpacked as the page's script unpacks it."""
    return [zlib.decompress(base64.b64decode(found), 31).decode("utf-8") for found in _PACKED.findall(page)]


def assert_clean_terminal(text: str) -> None:
    """No byte that a terminal would act on: escape sequences, bells, backspaces, carriage returns."""
    found = _CONTROL.search(text)
    assert found is None, (
        f"control character {found.group()!r} reached the terminal near: "
        f"{text[max(0, found.start() - 80) : found.end() + 80]!r}"
    )


def assert_no_secret(secrets: Iterable[str], *roots: Path, texts: Iterable[str] = ()) -> None:
    """None of `secrets` appears in any file under `roots` (bytes, any encoding of the run's files) or in `texts`."""
    secrets = [s for s in secrets if s]
    for root in roots:
        paths = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
        for path in paths:
            data = path.read_bytes()
            packed = unpacked(data.decode("utf-8", "replace")) if path.suffix == ".html" else []
            for secret in secrets:
                assert secret.encode() not in data, f"secret found in {path}"
                assert not any(secret in text for text in packed), f"secret found in {path}'s packed data"
    for text in texts:
        for secret in secrets:
            assert secret not in text, "secret found in output text"


def accounted(run_dir: Path) -> Counter[str]:
    """Samples recorded per model in the run's samples.jsonl (each sample once, whatever happened to it)."""
    counts: Counter[str] = Counter()
    seen: set[tuple[str, str]] = set()
    for record in iter_samples(run_dir / "samples.jsonl"):
        key = (record["model"], record["sample_id"])
        assert key not in seen, f"sample recorded twice: {key}"
        seen.add(key)
        counts[record["model"]] += 1
    return counts


def assert_accounted(run_dir: Path, asked: int, model: str | None = None) -> None:
    """samples.jsonl holds exactly `asked` samples (of `model`, or of the only model) and metrics.json counts them."""
    counts = accounted(run_dir)
    if model is None:
        assert len(counts) == 1, f"expected one model, found {sorted(counts)}"
        model = next(iter(counts))
    assert counts[model] == asked, f"{counts[model]} of {asked} samples recorded for {model!r}"
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["models"][model]["num_samples"] == asked
