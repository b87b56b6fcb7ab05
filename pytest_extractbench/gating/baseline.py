"""Stored runs (baselines): versioned files with per-sample scores and provenance.

``--extractbench-save NAME`` writes ``.extractbench/baselines/NNNN_NAME.json``
(numbered, so saving a name again keeps the history); ``--extractbench-compare``
takes ``NAME`` (its newest file), ``NNNN`` (that file) or a path. A baseline holds,
per model and sample, the row of per-sample quantities every resampled metric is
rebuilt from (:mod:`.resampled`), the category and score of each field, the sample's content hash
(:mod:`..dataset.identity`) and, for a sample run several times, how many of its runs passed (pass@k), so a later run is compared sample by sample, on samples whose content is
unchanged, without re-scoring anything. A toolcall, generate or repair run's baseline names its track and keeps
each sample's row of the track's figures (:mod:`..analysis.track_metrics`) instead, with no fields.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..analysis import catalog, track_metrics
from ..analysis.resampled import complete_row, measured, metric_values, row_keys, sample_row
from ..core import rundoc
from ..core.redact import redact_url
from ..dataset import identity

BASELINES_DIR = Path(".extractbench") / "baselines"
EXTRACTION = "extraction"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_FILE = re.compile(r"^(\d{4,})_(.+)\.json$")


class BaselineError(rundoc.RunDocError):
    """No stored baseline answers to the name or number asked for (a file that cannot be read is a
    :class:`~..core.rundoc.RunDocError`, this class's base); the message lists the stored names."""


def parse_baseline_name(value: str) -> str:
    """A name usable in a file name: letters, digits, ``.``, ``_``, ``-``."""
    if not _NAME.match(value):
        raise argparse.ArgumentTypeError(
            f"baseline name {value!r}: use letters, digits, '.', '_' and '-' (at most 100), "
            "starting with a letter or digit"
        )
    return value


@dataclass(frozen=True)
class SampleSnapshot:
    """What a baseline keeps of one scored sample."""

    row: Mapping[str, float]  # resampled.sample_row
    fields: tuple[tuple[str, str, float], ...] = ()  # (path, category, score) of every field
    sample_hash: str | None = None  # content hash of the sample scored; None in baselines saved before hashes
    passed: bool | None = None  # whether its item passed; None in baselines saved before it was kept
    repeats: tuple[int, int] | None = None  # (runs, passing runs) of a sample run more than once, for pass@k

    @classmethod
    def from_score(
        cls, score: Any, sample_hash: str | None = None, passed: bool | None = None, repeats: Any = None
    ) -> SampleSnapshot:
        fields = tuple((f.path, f.category, round(float(f.score), 6)) for f in score.fields)
        return cls(sample_row(score), fields, sample_hash, passed, repeat_counts(repeats))

    def as_dict(self, sample_id: str) -> dict[str, Any]:
        out: dict[str, Any] = {"sample_id": sample_id, "row": dict(self.row), "fields": [list(f) for f in self.fields]}
        if self.sample_hash is not None:
            out["sample_hash"] = self.sample_hash
        if self.passed is not None:
            out["passed"] = self.passed
        if self.repeats is not None:
            out["repeats"] = {"runs": self.repeats[0], "passed": self.repeats[1]}
        return out


def repeat_counts(found: Any) -> tuple[int, int] | None:
    """(runs, passing runs) from a record's or a baseline's ``repeats`` entry; None unless it ran more than once
    with a pass count that fits (a hand-edited file must not give pass@k a count it cannot have)."""
    if not isinstance(found, Mapping):
        return None
    runs, passed = found.get("runs"), found.get("passed")
    if not isinstance(runs, int) or not isinstance(passed, int) or isinstance(runs, bool) or isinstance(passed, bool):
        return None
    return (runs, passed) if runs > 1 and 0 <= passed <= runs else None


Snapshots = dict[str, dict[str, SampleSnapshot]]  # model -> sample id -> snapshot


def snapshot_records(records: Iterable[Any], hashes: Mapping[str, str] | None = None) -> Snapshots:
    """Per-model, per-sample snapshots of scored records (an extraction record's score, or another track's
    result); ``hashes``: sample id -> content hash."""
    out: Snapshots = {}
    for record in records:
        found = (hashes or {}).get(record.sample_id)
        score = getattr(record, "score", None)
        if score is None:  # a toolcall, generate or repair record: its track's figures
            snapshot = SampleSnapshot(
                track_metrics.sample_row(record.track, record.result, record.passed),
                (),
                found,
                bool(record.passed),
                repeat_counts(record.repeats),
            )
        else:
            repeats = (getattr(record, "diagnostics", None) or {}).get("repeats")
            snapshot = SampleSnapshot.from_score(score, found, getattr(record, "passed", None), repeats)
        out.setdefault(record.model, {})[record.sample_id] = snapshot
    return out


@dataclass
class Baseline:
    """A loaded baseline."""

    path: Path
    name: str
    created_at: str
    provenance: dict[str, Any]
    models: Snapshots
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    format_version: int = rundoc.FORMAT_VERSION[rundoc.BASELINE]
    track: str = EXTRACTION  # the track of the run it was saved from (a file without one: extraction)

    @property
    def keeps_repeats(self) -> bool:
        """Whether the file could hold pass counts over repeats (format 2 on); an older one never says."""
        return self.format_version >= 2

    def describe(self) -> str:
        """``'main' (0003_main.json, 2026-05-01T10:00:00+00:00, commit abc1234)``."""
        commit = (self.provenance.get("git") or {}).get("commit")
        parts = [self.path.name, self.created_at] + ([f"commit {commit[:10]}"] if commit else [])
        return f"{self.name!r} ({', '.join(parts)})"

    def sample_hashes(self) -> dict[str, str] | None:
        """Sample id -> content hash over every model's samples; None when any sample has none (an older file),
        since then whether the content is unchanged cannot be checked."""
        found: dict[str, str] = {}
        for samples in self.models.values():
            for sample_id, snapshot in samples.items():
                if snapshot.sample_hash is None:
                    return None
                found[sample_id] = snapshot.sample_hash
        return found


# -- provenance ---------------------------------------------------------------------------------


def file_hash(path: Path) -> str | None:
    """sha256 of a file's bytes, None when unreadable."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def git_info(directory: Path) -> dict[str, Any] | None:
    """Commit and dirty flag of the git checkout holding ``directory``; None outside git."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(directory), *args], capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status), "branch": git("rev-parse", "--abbrev-ref", "HEAD")}


def provenance(
    *,
    models: Sequence[str],
    dataset: Any,
    rootdir: Path,
    servers: Sequence[str] = (),
    prompt_hash: str | None = None,
    outputs: Sequence[Path] = (),
    package_version: str | None = None,
    options: Mapping[str, Any] | None = None,
    sample_hashes: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Where a run came from: enough to tell whether two runs are comparable. Holds no secrets. ``sample_hashes``:
    the dataset's samples' hashes when the run has them (hashing reads every sample's text and gold again)."""
    return {
        "models": list(models),
        "servers": [redact_url(url) for url in servers],
        "dataset": {
            "name": dataset.name,
            "source": dataset.source,
            "num_samples": len(dataset.samples),
            "hash": identity.dataset_hash_of(sample_hashes)
            if sample_hashes is not None
            else identity.dataset_hash(dataset.samples),
        },
        # Live runs hash their system/user prompt templates here; offline runs have no prompt.
        "prompt_hash": prompt_hash,
        "outputs": [{"path": str(path), "hash": file_hash(path)} for path in outputs],
        "git": git_info(rootdir),
        "package_version": package_version,
        "options": dict(options or {}),
    }


# -- files ----------------------------------------------------------------------------------------


def baseline_dir(rootdir: Path) -> Path:
    return rootdir / BASELINES_DIR


def stored(directory: Path) -> list[tuple[int, str, Path]]:
    """``(number, name, path)`` of every baseline file in ``directory``, oldest first."""
    if not directory.is_dir():
        return []
    found = []
    for path in directory.iterdir():
        match = _FILE.match(path.name)
        if match and path.is_file():
            found.append((int(match.group(1)), match.group(2), path))
    return sorted(found)


def resolve(ref: str, directory: Path, *, base_dir: Path) -> Path:
    """The file ``ref`` names: a path, ``NNNN`` or ``NNNN_NAME``, or a NAME (its newest file)."""
    candidate = Path(ref).expanduser()
    if not candidate.is_absolute():
        candidate = base_dir / candidate
    if candidate.is_file():
        return candidate
    files = stored(directory)
    matches = [path for number, name, path in files if name == ref or f"{number:04d}" == ref or path.stem == ref]
    if matches:
        return matches[-1]
    names = sorted({name for _, name, _ in files})
    available = f"stored baselines: {', '.join(names)}" if names else "no baseline is stored there yet"
    raise BaselineError(
        f"no baseline {ref!r}: not a file, and not a name in {directory} ({available}; "
        "create one with --extractbench-save NAME)"
    )


def build(
    name: str,
    snapshots: Snapshots,
    metrics: Mapping[str, Mapping[str, Any]],
    provenance_info: Mapping[str, Any],
    statistics: Mapping[str, Any],
    track: str = EXTRACTION,
) -> dict[str, Any]:
    """The JSON document of a baseline; ``track``: the run's (its figures are kept, not the catalog's)."""
    models = {}
    names = track_metrics.compared(track) or catalog.resampled()
    for model, samples in snapshots.items():
        model_metrics = {**(metrics.get(model, {}).get(track) or {}), **metrics.get(model, {})}
        models[model] = {
            "metrics": {key: model_metrics[key] for key in names if key in model_metrics},
            "confidence_intervals": model_metrics.get("confidence_intervals", {}),
            "samples": [samples[sample_id].as_dict(sample_id) for sample_id in sorted(samples)],
        }
    return {
        "format_version": rundoc.FORMAT_VERSION[rundoc.BASELINE],
        "kind": rundoc.BASELINE_KIND,
        "name": name,
        "track": track,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "provenance": dict(provenance_info),
        "statistics": dict(statistics),
        "models": models,
    }


def save(document: Mapping[str, Any], directory: Path) -> Path:
    """Write a baseline as the next numbered file; returns its path."""
    files = stored(directory)
    number = files[-1][0] + 1 if files else 1
    path = directory / f"{number:04d}_{document['name']}.json"
    rundoc.write_baseline(path, document)
    return path


def load(path: Path) -> Baseline:
    """Read and check a baseline file (:func:`~..core.rundoc.read_baseline`); a row that lacks a quantity is a
    :class:`~..core.rundoc.RunDocError` too."""
    data = rundoc.read_baseline(path)
    where = f"baseline {path}"
    models: Snapshots = {}
    track = data.get("track", EXTRACTION)
    figures = track_metrics.compared(track) if isinstance(track, str) else None
    if not isinstance(track, str) or (track != EXTRACTION and figures is None):
        raise rundoc.RunDocError(f"{where}: unknown track {track!r}")
    # a track's row needs its pass/fail; a figure whose counts it lacks (saved before the figure was kept) is left
    # unmeasured in the comparison, which then says so, rather than refusing the file
    keys = row_keys() if figures is None else track_metrics.PASS_RATE.columns
    kept = keys if figures is None else track_metrics.row_keys(track)
    try:
        for model, entry in data["models"].items():
            samples = {}
            for index, sample in enumerate(entry["samples"]):
                row = complete_row(sample["row"]) if figures is None else dict(sample["row"])
                missing = [key for key in keys if key not in row]
                if missing:
                    raise rundoc.RunDocError(
                        f"{where}: model {model!r}, sample {sample.get('sample_id')!r} (#{index}): "
                        f"row lacks {', '.join(missing)}"
                    )
                found, passed = sample.get("sample_hash"), sample.get("passed")
                samples[str(sample["sample_id"])] = SampleSnapshot(
                    {key: float(row[key]) for key in kept if key in row},
                    tuple((str(p), str(c), float(s)) for p, c, s in sample.get("fields", ())),
                    found if isinstance(found, str) else None,
                    passed if isinstance(passed, bool) else None,
                    repeat_counts(sample.get("repeats")),
                )
            models[model] = samples
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise rundoc.RunDocError(f"{where}: malformed ({type(exc).__name__}: {exc})") from None
    every = catalog.resampled() if figures is None else figures
    metrics = {
        model: metric_values(rows, measured(rows, every, figures), every)
        for model, samples in models.items()
        if (rows := [s.row for s in samples.values()])
    }
    return Baseline(
        path=path,
        name=str(data.get("name", path.stem)),
        created_at=str(data.get("created_at", "")),
        provenance=dict(data.get("provenance") or {}),
        models=models,
        metrics=metrics,
        format_version=int(data["format_version"]),
        track=track,
    )
