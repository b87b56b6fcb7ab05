"""What one run reads: settings, run directory, dataset, models, input problems and the baseline.

This is what ``pytest_extractbench_make_source(config, context)`` receives: a plugin that supplies its own
outputs reads ``context.settings``, ``context.dataset``, ``context.models()`` and ``context.run_dir``, and
may return ``context.default_source()`` to fall back to the built-in sources.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import rundir, rundoc
from ..core.errors import UsageProblem
from ..dataset.identity import CHANGED, SchemaTexts, sample_hash
from ..dataset.predictions import DEFAULT_OFFLINE_MODEL, PredictionsSource, coverage_problem, load_predictions
from ..dataset.rowfile import DatasetChangedError
from ..dataset.samples import Dataset, DatasetProblem, subsample
from ..dataset.sources import DatasetSourceError
from ..gating import baseline as baselines
from ..tracks import get_track
from .live import LiveSetup

if TYPE_CHECKING:
    from ..config.settings import Settings
    from ..dataset.responses import ModelResponse, OutputSource
    from ..dataset.statistics import TextMeasures

RUN_DIR_KEY = "extractbench_run_dir"  # a worker's run directory, chosen by the controller
MAX_LISTED = 20  # input problems shown one by one; the rest are counted (all of them are in metrics.json)


class RunEvents:
    """What a run announces as it goes; the pytest adapter forwards each to the hook of the same name."""

    def request_done(self, model: str, sample_id: str, response: ModelResponse) -> None:
        """One request (one run of a sample) is answered, after retries."""

    def sample_scored(self, record: Any) -> None:
        """One (model, sample) is scored: a SampleRecord on the extraction track, a TrackRecord on the others."""

    def run_finished(self, metrics: dict[str, Any]) -> None:
        """The controller has aggregated every model's metrics and written the run directory."""


@dataclass(frozen=True)
class Worker:
    """An xdist worker: its id (``gw0``), how many there are, and what the controller sent it."""

    id: str
    count: int
    input: Mapping[str, Any] = field(default_factory=dict)

    @property
    def speaks(self) -> bool:
        """Every worker loads the same inputs: only the first one reports their problems."""
        return self.id == "gw0"


class RunContext:
    """The inputs of one run in one process (the single process, or one xdist worker)."""

    def __init__(
        self,
        settings: Settings,
        *,
        base_dir: Path,
        worker: Worker | None = None,
        writes: bool = True,
        processes: int = 1,
        events: RunEvents | None = None,
        make_source: Callable[[], OutputSource | None] | None = None,
        extractor: Callable[..., Any] | None = None,
        samples: Dataset | list[tuple[str, Any]] | None = None,
        from_python: bool = False,
    ) -> None:
        self.settings = settings
        # the dataset given as an object from Python (a loaded Dataset, or rows as (location, row) pairs)
        self._given_samples = samples
        self.from_python = from_python  # evaluate(): messages name its keywords (output=, resume=), not the options
        self.base_dir = base_dir  # relative paths in options are relative to it (the invocation directory)
        self.worker = worker
        self.writes = writes  # False for --collect-only, --help, ...: paths are checked, nothing is written
        self.processes = processes
        self.events = events or RunEvents()
        self._make_source = make_source or self.default_source
        self._extractor = extractor  # a Python callable answering instead of a server (or the option's MODULE:FUNCTION)
        self.track = get_track(settings.tracks.track)
        self.started_at = datetime.now(timezone.utc)
        self.clock = time.perf_counter()
        self._lock: rundir.RunLock | None = None
        self._dataset: Dataset | None = None
        self.population = 0
        self.population_ids: set[str] = set()
        self._predictions: PredictionsSource | None = None
        self._served: list[str] | None = None  # the model a server lists, when --model is not given
        self._source: OutputSource | None = None
        self._rule_problems: list[DatasetProblem] | None = None
        self._sample_hashes: dict[str, str] | None = None
        self._text_measures: TextMeasures | None = None
        self._noted: dict[str, str] = {}  # sample id -> hash, taken as items ran (note_sample)
        self._noted_measures: TextMeasures | None = None
        self._schema_texts: SchemaTexts = {}  # each schema's canonical JSON, serialized once for the notes
        self._outgoing: dict[str, list[Any]] = {}  # a worker's notes its reports have not carried yet
        self._changed: list[DatasetProblem] = []  # samples whose line changed before the finish could hash them
        self._bucketing: tuple[Mapping[str, str | None], frozenset[str]] | None = None
        self._check_options()
        self.run_dir = self._claim_run_dir()
        self.baseline = None if self.is_worker else self._load_baseline()
        self.live = LiveSetup(self)
        self._lock_run_dir()

    @property
    def is_worker(self) -> bool:
        return self.worker is not None

    # -- the run directory ---------------------------------------------------------------------

    def _claim_run_dir(self) -> Path:
        """The run directory, checked before any item runs (locked once the context is complete)."""
        if self.worker is not None:
            return Path(self.worker.input[RUN_DIR_KEY])
        try:
            if self.settings.live.resume is not None:  # a resumed run continues in its own directory
                path = self.base_dir / self.settings.live.resume
                rundir.prepare(
                    path, what="resume directory" if self.from_python else "--extractbench-resume", resume=True
                )
            elif self.settings.output is not None:
                path = self.settings.output
                if not path.is_absolute():
                    path = self.base_dir / path
                rundir.prepare(
                    path,
                    what="output directory" if self.from_python else "--extractbench-output",
                    fresh=self.writes,
                    resume_with=f"resume={str(self.settings.output)!r} in place of output="
                    if self.from_python
                    else None,
                )
            else:
                stamp = self.started_at.astimezone().strftime("%Y%m%d-%H%M%S")
                path = self.settings.rootdir / ".extractbench" / "runs" / stamp
                if self.writes:  # --collect-only, --help: where it would go, not an empty directory left behind
                    path = rundir.claim_new(path)
        except rundir.RunDirError as exc:
            raise UsageProblem(f"extractbench: {exc}") from None
        return path

    def _lock_run_dir(self) -> None:
        """Last step of __init__: a failed start leaves no lock held."""
        if self.is_worker or not self.writes:
            return
        lock = rundir.RunLock(self.run_dir)
        try:
            lock.acquire()
        except rundir.RunDirError as exc:
            raise UsageProblem(f"extractbench: {exc}") from None
        self._lock = lock

    def _check_options(self) -> None:
        settings, live = self.settings, self.settings.live
        if settings.compare_fail and not settings.compare:
            raise UsageProblem("extractbench: --extractbench-compare-fail needs --extractbench-compare NAME|PATH")
        if live.replay is not None and settings.offline:
            raise UsageProblem("extractbench: --extractbench-replay and --extractbench-predictions exclude each other")
        if live.replay is not None and live.resume is not None:
            raise UsageProblem("extractbench: --extractbench-replay and --extractbench-resume exclude each other")
        if self.has_extractor:
            if settings.offline or live.replay is not None or live.base_urls:
                raise UsageProblem(
                    "extractbench: an extractor answers instead of predictions, a replayed journal or "
                    "a server: give only one of them"
                )
            if not self.track.gated:
                raise UsageProblem("extractbench: --extractbench-extractor runs the extraction track only")

    @property
    def has_extractor(self) -> bool:
        return self._extractor is not None or self.settings.live.extractor is not None

    @property
    def extractor(self) -> Callable[..., Any] | None:
        """The Python callable that answers, imported from --extractbench-extractor once."""
        if self._extractor is None and self.settings.live.extractor is not None:
            from ..live.extractor import load_extractor

            self._extractor = load_extractor(self.settings.live.extractor, self.base_dir)
        return self._extractor

    def answering_extractor(self) -> Callable[..., Any]:
        """The extractor of a run that ``has_extractor`` (given, or imported from its setting)."""
        fn = self.extractor
        if fn is None:
            raise UsageProblem("extractbench: this run has no extractor")
        return fn

    def _load_baseline(self) -> baselines.Baseline | None:
        """The --extractbench-compare target, read before anything runs so a typo fails fast."""
        if not self.settings.compare:
            return None
        try:
            path = baselines.resolve(
                self.settings.compare, baselines.baseline_dir(self.settings.rootdir), base_dir=self.base_dir
            )
            return baselines.load(path)
        except rundoc.RunDocError as exc:  # no such baseline (BaselineError), or a file that cannot be read
            raise UsageProblem(f"extractbench: {exc}") from None

    # -- inputs ----------------------------------------------------------------------------------

    @property
    def dataset(self) -> Dataset:
        if self._dataset is None:
            data = self.settings.data
            if data.documents_cache is None:  # document text and page renders are kept beside the response cache
                from ..dataset.documents import cache_dir_for

                data = replace(data, documents_cache=cache_dir_for(self.settings.rootdir))
            try:
                if isinstance(self._given_samples, Dataset):  # a copy: subsampling must not change the caller's
                    loaded = replace(
                        self._given_samples,
                        samples=list(self._given_samples.samples),
                        problems=list(self._given_samples.problems),
                    )
                elif self._given_samples is not None:
                    loaded = self.track.samples_from_rows(self.settings.dataset, self._given_samples, data=data)
                else:
                    loaded = self.track.load_samples(self.settings.dataset, base_dir=self.base_dir, data=data)
            except (FileNotFoundError, OSError, DatasetSourceError) as exc:
                raise UsageProblem(f"extractbench: {exc}") from None
            self.population = len(loaded.samples)
            self.population_ids = {sample.id for sample in loaded.samples}  # drawn or not: ids a prediction may name
            loaded.samples = subsample(loaded.samples, data.sample, data.seed)
            self._dataset = loaded
        return self._dataset

    @property
    def predictions(self) -> PredictionsSource | None:
        if self._predictions is None and self.settings.offline:
            models = self.settings.models
            try:
                self._predictions = load_predictions(
                    self.settings.predictions,
                    default_model=models[0] if len(models) == 1 else None,
                    base_dir=self.base_dir,
                )
            except (FileNotFoundError, OSError) as exc:
                raise UsageProblem(f"extractbench: {exc}") from None
            # the dataset's ids: the rows it skipped as invalid (reading them loads it) and its samples, drawn or not
            known = {p.sample_id for p in self.dataset.problems if p.sample_id} | self.population_ids
            for label, facts in self._predictions.files.items():
                problem = coverage_problem(label, facts, known, self.settings.dataset)
                if problem:
                    raise UsageProblem(f"extractbench: {problem}")
                facts.ids = set()  # checked: every id of a large file, held to the end for nothing
            self._predictions.check_ids(self.population_ids)
            self.population_ids = set()  # checked, and read nowhere else: 100,000 ids held ~7 MB to the end
        return self._predictions

    @property
    def problems(self) -> list[DatasetProblem]:
        found = list(self.dataset.problems)
        if self.settings.data.invalid_samples == "skip":  # listed in metrics.json only
            found = [p for p in found if p.severity != "error"]
        if self._rule_problems is None:
            self._rule_problems = self.track.input_problems(self.dataset.samples)
        found.extend(self._rule_problems)
        if self.predictions is not None:
            found.extend(self.predictions.problems)
        found.extend(self._changed)
        return found

    def models(self) -> list[str]:
        """Models that get one item per sample."""
        if self.settings.models:
            return list(dict.fromkeys(self.settings.models))
        if self.predictions is not None:
            return self.predictions.models or [DEFAULT_OFFLINE_MODEL]
        if self.live.replay is not None:
            return self.live.replay.models
        if self.has_extractor:
            from ..live.extractor import extractor_name

            return [extractor_name(self.answering_extractor())]
        if self.settings.live.embedded:
            from ..live.backends.llama_models import DEFAULT_EMBEDDED_MODEL  # the live layer only when it serves

            return [DEFAULT_EMBEDDED_MODEL]
        if self.settings.live.base_urls:
            return self._served_model()
        return []

    def _served_model(self) -> list[str]:
        """A server and no --model: the model it serves, when it lists exactly one (GET /models, once)."""
        if self._served is None:
            from ..live.connection import ConnectionCheckError, run_check
            from ..live.transport import api_key_from_env, client_config

            url = self.settings.live.base_urls[0]
            try:
                served = run_check(client_config(self.settings.live, url, api_key_from_env()), [])
            except (ConnectionCheckError, ValueError) as exc:
                raise UsageProblem(f"extractbench: {exc}") from None
            if served is None or len(served) != 1:
                offer = f"it serves {', '.join(served)}" if served else "it does not list its models"
                raise UsageProblem(
                    f"extractbench: no model given and the server cannot pick one ({offer}): use --model NAME"
                )
            self._served = served
        return list(self._served)

    def check_invalid_policy(self) -> None:
        """With --extractbench-invalid-samples fail, invalid samples stop the run before anything is asked."""
        invalid = self.dataset.skipped
        if not invalid or self.settings.data.invalid_samples != "fail":
            return
        from ..core import textsafe
        from ..report.terminal import PROBLEM_WIDTH

        listed = "\n  ".join(textsafe.terminal(p, PROBLEM_WIDTH) for p in invalid[:MAX_LISTED])
        more = f"\n  ... {len(invalid) - MAX_LISTED} more" if len(invalid) > MAX_LISTED else ""
        raise UsageProblem(
            f"extractbench: {len(invalid)} invalid sample problem(s) and "
            f"--extractbench-invalid-samples fail:\n  {listed}{more}"
        )

    @property
    def checks_regressions(self) -> bool:
        """A baseline comparison that can fail the session (compare-fail checks, on the run or on a subset)."""
        subsets = self.settings.subsets
        scoped = (
            subsets is not None
            and bool(subsets)
            and (
                any(rule.compare_fail for rule in subsets.rules)
                or any(group.compare_fail for group in subsets.group_by)
            )
        )
        return self.baseline is not None and (bool(self.settings.compare_fail) or scoped)

    def sample_hashes(self) -> dict[str, str]:
        """Sample id -> content hash of the dataset's samples, computed once."""
        if self._sample_hashes is None:
            self._read_samples()
        assert self._sample_hashes is not None
        return self._sample_hashes

    def text_measures(self) -> TextMeasures:
        """The dataset's text lengths and gold field counts (:class:`~..dataset.statistics.TextMeasures`)."""
        if self._sample_hashes is None:
            self._read_samples()
        if self._text_measures is None:
            from ..dataset.statistics import TextMeasures

            self._text_measures = TextMeasures.of(self.dataset.samples)
        return self._text_measures

    def note_sample(self, sample: Any) -> None:
        """Hash a sample and take its text measures while its item has its text and gold at hand, so the finish
        need not read them again (a JSONL sample reads them from its line: dataset/rowfile.py); once a sample,
        before the finish has hashed the dataset. An xdist worker keeps its notes for its reports to carry to the
        controller (:meth:`sent_note`, :meth:`take_note`): the controller reads the dataset only at the finish, when
        the file may no longer be what the workers scored."""
        if self._sample_hashes is not None or sample.id in self._noted:
            return
        from ..dataset.statistics import TextMeasures

        note = [sample_hash(sample, self._schema_texts), *(TextMeasures.counts(sample) if self.track.gated else ())]
        if self.is_worker:
            self._noted[sample.id] = note[0]
            self._outgoing[sample.id] = note
        else:
            self.take_note(sample.id, note)

    def sent_note(self, sample_id: str) -> list[Any] | None:
        """A worker's note of a sample, once: its hash and (extraction track) text measures, for the report."""
        return self._outgoing.pop(sample_id, None)

    def take_note(self, sample_id: str, note: Sequence[Any]) -> None:
        """A sample's hash and text measures noted as its item ran, here or on an xdist worker."""
        if self._sample_hashes is not None or sample_id in self._noted or (self.track.gated and len(note) != 4):
            return
        self._noted[sample_id] = str(note[0])
        if self.track.gated:
            from ..dataset.statistics import TextMeasures

            if self._noted_measures is None:
                self._noted_measures = TextMeasures()
            self._noted_measures.add_counts(*(int(n) for n in note[1:]))

    def _read_samples(self) -> None:
        """Every sample's hash and, on the extraction track, its text measures, in one pass over the samples its
        items did not note: a sample of a JSONL file reads its text and gold from its line again (dataset/rowfile.py),
        once for both. Hashes are in dataset order; the measures' order does not matter (their statistics are of
        integers: count, mean, median, percentiles, min and max)."""
        from ..dataset.statistics import TextMeasures

        hashes: dict[str, str] = {}
        measures = (self._noted_measures or TextMeasures()) if self.track.gated else None
        for sample in self.dataset.samples:
            found = self._noted.get(sample.id)
            if found is None:
                try:
                    found = sample_hash(sample, self._schema_texts)
                except DatasetChangedError as exc:  # the run goes on: the sample is named, never hashed as loaded
                    found = CHANGED
                    self._changed.append(changed_problem(exc))
                else:
                    if measures is not None:
                        measures.add(sample)
            hashes[sample.id] = found
        self._sample_hashes = hashes
        self._text_measures = measures
        self._noted, self._noted_measures, self._schema_texts = {}, None, {}

    def sample_bucket(self, record: Any) -> Any:
        """The scored sample's bucket against the baseline (:mod:`..gating.buckets`) as soon as it is scored, for its
        JUnit testcase; None without a baseline of this run's track, or for a model the baseline lacks."""
        if self.baseline is None or self.baseline.track != self.track.name:
            return None
        from ..gating.buckets import sample_bucket
        from ..gating.pairing import pair_samples
        from ..gating.regression import pair_models

        if self._bucketing is None:
            changed = frozenset(pair_samples(self.baseline.sample_hashes() or {}, self.sample_hashes()).changed)
            self._bucketing = (pair_models(sorted(self.models()), sorted(self.baseline.models)), changed)
        pairs, changed = self._bucketing
        counterpart = pairs.get(record.model)
        if counterpart is None:
            return None
        current = baselines.snapshot_records([record])[record.model][record.sample_id]
        return sample_bucket(
            record.sample_id,
            current,
            self.baseline.models[counterpart].get(record.sample_id),
            changed=record.sample_id in changed,
            delta=self.settings.sample_regression_delta,
        )

    def check_baseline_pairing(self) -> None:
        """A regression check against a baseline whose samples are mostly changed, replaced or gone would compare
        a different benchmark: stop before anything is asked, naming the counts."""
        if not self.checks_regressions or self.baseline is None or self.baseline.track != self.track.name:
            return  # a baseline of another track: every check says it could not be measured, at the end
        stored = self.baseline.sample_hashes()
        if stored is None:  # an older baseline: reported as unchecked by the comparison, not refused
            return
        from ..gating.pairing import pair_samples, too_few_unchanged

        pairing = pair_samples(stored, self.sample_hashes())
        why = too_few_unchanged(pairing, self.settings.baseline_min_unchanged)
        if why:
            raise UsageProblem(
                f"extractbench: baseline {self.baseline.describe()}: {why}; save a baseline of this "
                "dataset (--extractbench-save NAME) or compare with one that matches it"
            )

    # -- where the answers come from ----------------------------------------------------------------

    @property
    def source(self) -> OutputSource:
        if self._source is None:
            self._source = self._make_source()
            if self._source is None:
                raise UsageProblem("extractbench: no output source: pass --extractbench-predictions FILE")
        return self._source

    def default_source(self) -> OutputSource | None:
        """The recorded predictions, the replayed journal, or the live pipeline."""
        return self.predictions if self.predictions is not None else self.live.make_source()

    def responses(self, model: str, sample: Any) -> list[ModelResponse]:
        """The runs of one sample (several with --extractbench-repeats), each announced."""
        repeats = self.settings.tracks.repeats
        several = getattr(self.source, "responses", None)
        found = (
            list(several(model, sample, repeats))
            if repeats > 1 and several is not None
            else [self.source.response(model, sample)]
        )
        for response in found:
            self.events.request_done(model, sample.id, response)
        return found

    def close_source(self) -> None:
        """Release the output source (live: cancel the requests still queued, fsync the journal)."""
        source, self._source = self._source, None
        if source is not None:
            source.close()

    def close(self) -> None:
        try:
            self.close_source()
        finally:
            self.live.stop()
            if self._lock is not None:
                self._lock.release()
                self._lock = None


def changed_problem(exc: DatasetChangedError) -> DatasetProblem:
    """A sample whose line changed during the run, as an input problem: named in metrics.json and the summary."""
    return DatasetProblem(
        exc.source,
        exc.location,
        f"{exc.reason}; not scored from the line as loaded, its hash marked changed",
        exc.sample_id,
    )
