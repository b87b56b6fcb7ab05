"""The human-facing files of a run directory: report.html, summary.md, metrics.csv, samples.csv
(a toolcall/generate/repair run: report.html and summary.md with its track sections).

Written after metrics.json and samples.jsonl; a failure here is reported and never loses
the machine-readable files. A report the disk refuses (full, over quota) fails the session like
a refused metrics.json: what was measured is not all on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core import rundoc, textsafe
from ..core.files import OutputWriteError

log = textsafe.get_logger(__name__)


@dataclass(frozen=True)
class ReportOptions:
    """Report settings (one field of :class:`~pytest_extractbench.config.settings.Settings`)."""

    html: bool = True  # --extractbench-no-html-report turns it off
    charts: bool = True  # --extractbench-charts off: report.html without its charts
    failure_details: int = 20  # sample failures pytest details in its FAILURES section; the run's files hold all

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def write_reports(
    run_dir: Path,
    document: Mapping[str, Any],
    records: Callable[[], Iterable[Mapping[str, Any]]],
    options: ReportOptions,
    samples: Mapping[str, Sequence[Any]] | None = None,
) -> tuple[list[Path], list[str], list[str]]:
    """Write every report file; returns the files written, the errors met making them, and the files the disk
    refused (a full disk, a quota: :class:`~..core.files.OutputWriteError`). ``samples``: the dataset's samples
    by the file the records name, when the caller still holds them (see :class:`.rows.RunData`)."""
    # imported here: the report writers (jinja2 behind them) are needed once, at session end
    from .exports import METRICS_CSV, SAMPLES_CSV, SUMMARY_FILE, write_exports
    from .html import REPORT_FILE, write_report
    from .rows import RunData
    from .sample_table import OnePass
    from .track_report import write_track_reports
    from .track_sections import SECTIONS

    written: list[Path] = []
    errors: list[str] = []
    refused: list[str] = []
    # A resumed run's directory holds the previous reports: a report that is not rewritten (turned off,
    # or failing) must not stay beside the new metrics.json and describe another run.
    for name in (SUMMARY_FILE, METRICS_CSV, SAMPLES_CSV, REPORT_FILE):
        try:
            (run_dir / name).unlink(missing_ok=True)
        except OSError as exc:
            errors.append(f"{name}: an earlier run's file cannot be removed: {exc}")
    document = rundoc.complete(document)  # every key a renderer relies on, whoever made the document
    if document["track"] in SECTIONS:
        # a toolcall/generate/repair run: its track sections, no extraction CSVs
        try:
            written.extend(write_track_reports(run_dir, document, html=options.html))
        except OutputWriteError as exc:
            refused.append(str(exc))
        except Exception as exc:
            log.exception("extractbench: writing the track reports failed")
            errors.append(f"summary.md/report.html: {type(exc).__name__}: {exc}")
        return written, errors, refused
    # samples.jsonl read once: report.html's viewer reads the records whole and the OnePass keeps what the charts,
    # summary.md and the CSVs need of them (written after it, listed before it as before)
    records = OnePass(records)
    html: list[Path] = []
    html_errors: list[str] = []
    html_refused: list[str] = []
    if options.html:
        try:
            html.append(
                write_report(RunData(document, records, run_dir, samples), run_dir / REPORT_FILE, charts=options.charts)
            )
        except OutputWriteError as exc:
            html_refused.append(str(exc))
        except Exception as exc:
            log.exception("extractbench: writing report.html failed")
            html_errors.append(f"report.html: {type(exc).__name__}: {exc}")
    try:
        written.extend(write_exports(run_dir, document, records))
    except OutputWriteError as exc:
        refused.append(str(exc))
    except Exception as exc:
        log.exception("extractbench: writing summary.md/CSV failed")
        errors.append(f"summary.md/CSV files: {type(exc).__name__}: {exc}")
    errors.extend(html_errors)
    refused.extend(html_refused)
    return written + html, errors, refused
