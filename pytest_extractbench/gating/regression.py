"""Comparing a run with a baseline: per-metric and per-field deltas, the verdict on the EQS delta, the regression gate.

A ``--extractbench-compare-fail`` check fails only when the metric got worse by
more than its margin AND the paired test on the samples both runs scored says the
change is significant: a rerun of an unchanged model, or noise the size of the
confidence interval, does not fail CI. Pure functions, no pytest.
"""

from __future__ import annotations

import argparse
import math
import re
import zlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis import catalog, track_metrics
from ..analysis.resampled import MetricDelta, Metrics, measured, paired_deltas, resolve_metric
from ..analysis.stats import Interval, format_p
from ..scoring import StatsOptions
from .baseline import EXTRACTION, Baseline, SampleSnapshot, Snapshots
from .buckets import DEFAULT_DELTA, Buckets, bucket_samples
from .field_deltas import field_deltas
from .outcomes import HELD, MISSED, UNMEASURED
from .pairing import Pairing, pair_samples
from .repeated import CHECK_WITHOUT, REPEATED, RepeatComparison, compare_repeats, repeated_metric

IMPROVED, NEUTRAL, REGRESSED = "improved", "neutral", "regressed"
EQS = "extraction_quality_score"
PASS_RATE = track_metrics.PASS_RATE.name  # what the verdict reads on the toolcall, generate and repair tracks
NOT_COMPARABLE = "not comparable"
_MARGIN = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(%?)$")


# -- --extractbench-compare-fail EXPR ------------------------------------------------------------


@dataclass(frozen=True)
class CompareFailCheck:
    """``METRIC:[-]X`` (absolute) or ``METRIC:[-]X%`` (relative to the baseline value): the tolerated worsening."""

    metric: str
    margin: float
    relative: bool
    expr: str

    def allowed(self, baseline_value: float) -> float:
        """The largest worsening that passes, in the metric's units."""
        return self.margin * abs(baseline_value) if self.relative else self.margin

    def __str__(self) -> str:
        return self.expr


def parse_compare_fail(value: str) -> CompareFailCheck:
    """Parse ``eqs:-0.02``, ``field_f1_partial:-2%``, ``hallucination_rate:+0.01`` (``argparse`` type)."""
    text = str(value).strip()
    name, sep, margin_text = text.rpartition(":")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{value!r}: expected METRIC:MARGIN, e.g. eqs:-0.02 or field_f1_partial:-2%")
    try:
        metric = resolve_metric(name)
    except KeyError as exc:
        # pass@k, pass^k: per-sample pass counts, compared at one k; or a figure of the toolcall, generate or
        # repair track (the run's track is not known here: a figure its track lacks could not be measured)
        found = repeated_metric(name) or track_metrics.find(name)
        if found is None:
            known = ", ".join(sorted(track_metrics.find_names()))
            message = f"{value!r}: {exc.args[0]}, pass@k, pass^k; on the other tracks {known}"
            raise argparse.ArgumentTypeError(message) from None
        metric = found
    match = _MARGIN.match(margin_text.strip())
    if not match:
        raise argparse.ArgumentTypeError(
            f"{value!r}: the margin {margin_text!r} must be a number, optionally signed and ending in %"
        )
    sign, number, percent = match.groups()
    wrong_sign = "+" if metric.higher_is_better else "-"
    if sign == wrong_sign:
        direction, right = ("higher", "-") if metric.higher_is_better else ("lower", "+")
        raise argparse.ArgumentTypeError(
            f"{value!r}: a {direction} {metric.name} is better; give the tolerated worsening as "
            f"{name}:{right}{number}{percent}"
        )
    margin = float(number) / (100 if percent else 1)
    if not math.isfinite(margin):  # 400 digits read as infinity: a margin no regression could exceed
        raise argparse.ArgumentTypeError(f"{value!r}: the margin must be a finite number")
    return CompareFailCheck(metric.name, margin, bool(percent), text)


def parse_verdict_thresholds(value: str) -> tuple[float, float]:
    """``IMPROVE,REGRESS`` EQS deltas of the baseline verdict, e.g. ``0.01,-0.02``."""
    try:
        improve, regress = (float(part) for part in str(value).split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected two numbers IMPROVE,REGRESS such as 0.01,-0.02, got {value!r}"
        ) from None
    if not (math.isfinite(improve) and math.isfinite(regress)) or improve < 0:
        raise argparse.ArgumentTypeError(f"expected IMPROVE >= 0 and a finite REGRESS, got {value!r}")
    return improve, -abs(regress)


# -- results ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckResult:
    """One compare-fail check applied to one model (and scope)."""

    check: str
    metric: str
    model: str
    scope: str | None
    failed: bool
    message: str
    delta: MetricDelta | None = None
    allowed_drop: float | None = None
    exceeds_margin: bool = False
    outcome: str = ""  # held, missed or could not be measured (:mod:`.outcomes`)

    def __post_init__(self) -> None:
        if not self.outcome:
            object.__setattr__(self, "outcome", MISSED if self.failed else HELD)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        """A check as metrics.json keeps it (``baseline_comparison.checks``); the paired tests' details
        (``delta.tests``) are not kept there."""
        metric, delta = str(data["metric"]), None
        if isinstance(data.get("ci"), Mapping):
            entry = catalog.get(metric)
            delta = MetricDelta(
                metric,
                a=data["current"],
                b=data["baseline"],
                delta=data["delta"],
                ci=Interval(**data["ci"]),
                p_value=data.get("p_value"),
                test=str(data.get("test", "")),
                tests={},
                significant=bool(data.get("significant")),
                n=int(data.get("n_shared") or 0),
                higher_is_better=entry.higher_is_better if entry is not None else True,
            )
        return cls(
            str(data["check"]),
            metric,
            str(data["model"]),
            data.get("scope"),
            bool(data["failed"]),
            str(data.get("message", "")),
            delta,
            data.get("allowed_drop"),
            bool(data.get("exceeds_margin")),
            str(data.get("outcome") or ""),
        )

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "check": self.check,
            "outcome": self.outcome,
            "metric": self.metric,
            "model": self.model,
            "scope": self.scope,
            "failed": self.failed,
            "exceeds_margin": self.exceeds_margin,
            "allowed_drop": self.allowed_drop,
            "message": self.message,
        }
        if self.delta is not None:
            d = self.delta
            out.update(
                baseline=d.b,
                current=d.a,
                delta=d.delta,
                ci=d.ci.as_dict(),
                p_value=d.p_value,
                test=d.test,
                significant=d.significant,
                n_shared=d.n,
            )
        return out


def evaluate_check(
    check: CompareFailCheck, delta: MetricDelta, *, model: str, scope: str | None, alpha: float
) -> CheckResult:
    """Fail when the worsening exceeds the margin and the paired test is significant at ``alpha``.

    A value that is not a number (a NaN or infinity in the baseline file) fails the check: NaN
    compares false with every margin, so it would otherwise pass whatever the run did.
    """
    where = f"model {model!r}" + (f", {scope}" if scope else "")
    if not (math.isfinite(delta.a) and math.isfinite(delta.b)):
        side = "the baseline" if not math.isfinite(delta.b) else "this run"
        message = (
            f"COULD NOT BE MEASURED {where}: {delta.metric} {delta.b:.3f} -> {delta.a:.3f}: {side} has no numeric "
            f"value for it ({check}); fix or re-save the baseline"
        )
        return CheckResult(str(check), check.metric, model, scope, True, message, delta, None, False, UNMEASURED)
    allowed = check.allowed(delta.b)
    exceeds = delta.worsening > allowed + 1e-12
    failed = exceeds and delta.significant
    ci = delta.ci
    facts = (
        f"{delta.metric} {delta.b:.3f} -> {delta.a:.3f} (delta {delta.delta:+.3f} "
        f"[{100 * ci.confidence:g}% CI: {ci.low:+.3f}, {ci.high:+.3f}], {format_p(delta.p_value)}, "
        f"paired {delta.test} test on {delta.n} shared samples)"
    )
    if failed:
        message = (
            f"REGRESSION {where}: {facts}: worse by more than the allowed {allowed:.3f} ({check}) "
            f"and significant at {alpha:g}"
        )
    elif exceeds:
        message = (
            f"within noise {where}: {facts}: worse by more than {allowed:.3f} ({check}) "
            f"but not significant at {alpha:g}"
        )
    else:
        message = f"ok {where}: {facts}: within the allowed {allowed:.3f} ({check})"
    return CheckResult(str(check), check.metric, model, scope, failed, message, delta, allowed, exceeds)


def verdict(delta: float, thresholds: tuple[float, float], higher_is_better: bool = True) -> str:
    """The verdict on a delta: improved above the first threshold, regressed below the second."""
    improve, regress = thresholds
    if not math.isfinite(delta):  # a NaN in the baseline is not "neutral": the runs cannot be compared
        return NOT_COMPARABLE
    gain = delta if higher_is_better else -delta
    if gain > improve:
        return IMPROVED
    if gain < regress:
        return REGRESSED
    return NEUTRAL


# -- comparing one model with its baseline -----------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """A named part of the samples (a subset or a group) with its own checks."""

    label: str
    sample_ids: frozenset[str]
    checks: tuple[CompareFailCheck, ...]


@dataclass
class ModelComparison:
    """One model of the current run against its counterpart in the baseline."""

    model: str
    baseline_model: str
    shared: list[str]
    only_current: list[str]
    only_baseline: list[str]
    deltas: dict[str, MetricDelta]
    fields: dict[str, dict[str, Any]]
    verdict: str
    checks: list[CheckResult] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # scored by both, content changed since: not compared
    hashed: bool = True  # False: the baseline has no content hashes, so samples are paired by id alone
    buckets: Buckets | None = None  # every sample either run scored: regressed, fixed, ... (:mod:`.buckets`)
    repeats: RepeatComparison | None = None  # pass@k and pass^k over repeats (:mod:`.repeated`)
    verdict_metric: str = EQS  # what the verdict reads: EQS, or a track's pass rate

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.failed]

    def as_dict(self) -> dict[str, Any]:
        eqs = self.deltas.get(self.verdict_metric)
        paired_on = "unchanged samples (same id and content hash)" if self.hashed else "shared sample ids"
        differ = self.only_current or self.only_baseline or self.changed
        return {
            "baseline_model": self.baseline_model,
            "n_shared": len(self.shared),
            "only_current": len(self.only_current),
            "only_baseline": len(self.only_baseline),
            "n_changed": len(self.changed),
            "samples": {
                "unchanged": len(self.shared),
                "changed": len(self.changed),
                "added": len(self.only_current),
                "removed": len(self.only_baseline),
                "checked": self.hashed,
            },
            "paired_on": paired_on + (" (the sample sets differ)" if differ else ""),
            "verdict": self.verdict,
            **({"verdict_metric": self.verdict_metric} if self.verdict_metric != EQS else {}),
            "baseline_accuracy": eqs.b if eqs else None,
            "candidate_accuracy": eqs.a if eqs else None,
            "delta": eqs.delta if eqs else None,
            "metrics": {name: d.as_dict() for name, d in self.deltas.items()},
            "per_field_deltas": self.fields,
            "checks": [c.as_dict() for c in self.checks],
            **({"buckets": self.buckets.as_dict()} if self.buckets is not None else {}),
            **({"repeats": self.repeats.as_dict()} if self.repeats is not None and self.repeats.note("") else {}),
        }


def _rng(options: StatsOptions, *parts: str) -> np.random.Generator:
    # One stream per comparison, independent of which other comparisons ran.
    return np.random.default_rng([options.seed, zlib.crc32("\0".join(parts).encode("utf-8"))])


def compare_model(
    model: str,
    current: Mapping[str, SampleSnapshot],
    baseline: Mapping[str, SampleSnapshot],
    options: StatsOptions,
    *,
    baseline_model: str | None = None,
    checks: Sequence[CompareFailCheck] = (),
    scopes: Sequence[Scope] = (),
    thresholds: tuple[float, float] = (0.01, -0.02),
    policy: str = "fail",
    changed: Collection[str] = (),
    hashed: bool = True,
    bucket_delta: float = DEFAULT_DELTA,
    keeps_repeats: bool = True,
    track: str = EXTRACTION,
) -> ModelComparison:
    """Deltas current - baseline on the samples both scored whose content is unchanged (``changed``: ids whose
    content hash differs, left out), the verdict, and every check's result. pass@k and pass^k are compared on the
    shared samples both runs repeated (``keeps_repeats``: the baseline's format holds pass counts). ``track``: whose
    figures are compared (the catalog's headline metrics and EQS's verdict for extraction; every figure of
    :mod:`..analysis.track_metrics` and the pass rate's verdict for the other tracks)."""
    baseline_model = baseline_model or model
    figures = track_metrics.compared(track)
    every: Metrics = catalog.resampled() if figures is None else figures
    lead = catalog.names("headline") if figures is None else track_metrics.headline(track)
    both = set(current) & set(baseline)
    edited = sorted(both & set(changed))
    shared = sorted(both - set(edited))
    only_current = sorted(set(current) - set(baseline))
    only_baseline = sorted(set(baseline) - set(current))
    names = list(dict.fromkeys([*lead, *(c.metric for c in checks if c.metric in every)]))
    deltas: dict[str, MetricDelta] = {}
    fields: dict[str, dict[str, Any]] = {}
    if shared:
        rows_now, rows_then = [current[i].row for i in shared], [baseline[i].row for i in shared]
        # a metric only some runs measure (the judge's grade) is compared only when both runs have it
        names = [n for n in measured(rows_now, names, figures) if n in measured(rows_then, names, figures)]
        deltas = paired_deltas(
            rows_now,
            rows_then,
            options,
            names,
            rng=_rng(options, model, baseline_model),
            metrics=every,
        )
        fields = field_deltas([current[i] for i in shared], [baseline[i] for i in shared])
    repeats = compare_repeats(
        current,
        baseline,
        shared,
        options,
        keeps_repeats=keeps_repeats,
        rng=_rng(options, model, baseline_model, "repeats"),
    )
    deltas.update(repeats.deltas)
    verdict_metric = EQS if figures is None else PASS_RATE
    eqs = deltas.get(verdict_metric)
    result = ModelComparison(
        model,
        baseline_model,
        shared,
        only_current,
        only_baseline,
        deltas,
        fields,
        verdict(eqs.delta, thresholds) if eqs else NEUTRAL,
        changed=edited,
        hashed=hashed,
        buckets=bucket_samples(current, baseline, changed=edited, delta=bucket_delta),
        repeats=repeats,
        verdict_metric=verdict_metric,
    )
    # a checked metric one side did not measure (the judge failed, or was not asked this time) cannot be compared
    absent = {}
    if shared:
        for check in checks:
            if check.metric in REPEATED and check.metric not in deltas:
                absent[check.metric] = repeats.why or CHECK_WITHOUT
            elif check.metric not in every:
                absent[check.metric] = f"the {track} track has no {check.metric} (it compares {', '.join(every)})"
            elif check.metric not in deltas:
                now = bool(measured([current[i].row for i in shared], [check.metric], figures))
                side = "the baseline" if now else "this run"
                absent[check.metric] = f"{side} has no {check.metric} for the shared samples"
    result.checks.extend(_run_checks(model, None, checks, deltas, options, absent, policy))
    for scope in scopes:
        ids = [i for i in shared if i in scope.sample_ids]
        scoped: dict[str, MetricDelta] = {}
        if ids:
            scoped = paired_deltas(
                [current[i].row for i in ids],
                [baseline[i].row for i in ids],
                options,
                list(dict.fromkeys(c.metric for c in scope.checks if c.metric in every)),
                rng=_rng(options, model, baseline_model, scope.label),
                metrics=every,
            )
            if any(c.metric in REPEATED for c in scope.checks):
                found = compare_repeats(
                    current,
                    baseline,
                    ids,
                    options,
                    keeps_repeats=keeps_repeats,
                    rng=_rng(options, model, baseline_model, scope.label, "repeats"),
                )
                scoped.update(found.deltas)
        result.checks.extend(_run_checks(model, scope.label, scope.checks, scoped, options, absent, policy))
    return result


def _run_checks(
    model: str,
    scope: str | None,
    checks: Sequence[CompareFailCheck],
    deltas: Mapping[str, MetricDelta],
    options: StatsOptions,
    absent: Mapping[str, str] | None = None,
    policy: str = "fail",
) -> list[CheckResult]:
    out = []
    for check in checks:
        delta = deltas.get(check.metric)
        if delta is None:
            where = f"model {model!r}" + (f", {scope}" if scope else "")
            why = (absent or {}).get(check.metric) or "no sample in common with the baseline"
            out.append(
                CheckResult(
                    str(check),
                    check.metric,
                    model,
                    scope,
                    policy == "fail",
                    f"COULD NOT BE MEASURED {where}: {why} ({check})",
                    outcome=UNMEASURED,
                )
            )
            continue
        out.append(evaluate_check(check, delta, model=model, scope=scope, alpha=options.alpha))
    return out


def pair_models(current: Sequence[str], baseline: Sequence[str]) -> dict[str, str | None]:
    """Which baseline model each current model is compared with: the same name, or the only one of each."""
    if len(current) == 1 and len(baseline) == 1:
        return {current[0]: baseline[0]}
    return {model: (model if model in baseline else None) for model in current}


@dataclass
class RunComparison:
    """The whole run against a baseline."""

    baseline: Baseline
    models: dict[str, ModelComparison]
    unchecked: list[CheckResult]  # checks that could not run (no counterpart model in the baseline)
    notes: list[str]
    options: StatsOptions
    pairing: Pairing | None = None  # the baseline's samples against this run's dataset

    @property
    def checks(self) -> list[CheckResult]:
        return [c for m in self.models.values() for c in m.checks] + self.unchecked

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if c.failed]

    def as_dict(self) -> dict[str, Any]:
        b = self.baseline
        return {
            "baseline": {"name": b.name, "path": str(b.path), "created_at": b.created_at, "provenance": b.provenance},
            "test": self.options.test,
            "alpha": self.options.alpha,
            "confidence": self.options.confidence,
            "notes": self.notes,
            "pairing": self.pairing.as_dict() if self.pairing is not None else None,
            "models": {model: comparison.as_dict() for model, comparison in self.models.items()},
            "checks": [c.as_dict() for c in self.checks],
            "passed": not self.failures,
        }


def compare_run(
    current: Snapshots,
    baseline: Baseline,
    options: StatsOptions,
    *,
    checks: Sequence[CompareFailCheck] = (),
    scopes: Mapping[str, Sequence[Scope]] | None = None,
    thresholds: tuple[float, float] = (0.01, -0.02),
    sample_hashes: Mapping[str, str] | None = None,
    policy: str = "fail",
    bucket_delta: float = DEFAULT_DELTA,
    track: str = EXTRACTION,
) -> RunComparison:
    """Compare every model of the run with its baseline counterpart and apply the checks.

    ``sample_hashes`` (this run's dataset: sample id -> content hash) pairs only the samples whose content is
    unchanged since the baseline; without it, or against a baseline saved without hashes, samples pair by id.
    ``track``: the run's; a baseline of another track measured other figures, so nothing is compared and every
    check could not be measured.
    """
    if baseline.track != track:
        return _other_track(current, baseline, options, checks, policy, track)
    notes = []
    pairing = None
    changed: frozenset[str] = frozenset()
    stored = baseline.sample_hashes()
    if sample_hashes is not None:
        every = {i: None for samples in baseline.models.values() for i in samples}
        pairing = pair_samples(stored if stored is not None else every, sample_hashes, checked=stored is not None)
        changed = frozenset(pairing.changed)
    models: dict[str, ModelComparison] = {}
    unchecked: list[CheckResult] = []
    has_checks = bool(checks) or any(s.checks for found in (scopes or {}).values() for s in found)
    for model, counterpart in pair_models(sorted(current), sorted(baseline.models)).items():
        if counterpart is None:
            notes.append(f"model {model!r} is not in the baseline (it has: {', '.join(sorted(baseline.models))})")
            if has_checks:
                unchecked.append(
                    CheckResult(
                        "*",
                        "*",
                        model,
                        None,
                        policy == "fail",
                        f"COULD NOT BE MEASURED model {model!r}: the baseline has no model of that name "
                        f"(it has: {', '.join(sorted(baseline.models))})",
                        outcome=UNMEASURED,
                    )
                )
            continue
        if counterpart != model:
            notes.append(f"model {model!r} is compared with the baseline's only model {counterpart!r}")
        comparison = compare_model(
            model,
            current[model],
            baseline.models[counterpart],
            options,
            baseline_model=counterpart,
            checks=checks,
            scopes=(scopes or {}).get(model, ()),
            thresholds=thresholds,
            policy=policy,
            changed=changed,
            hashed=pairing is None or pairing.checked,
            bucket_delta=bucket_delta,
            keeps_repeats=baseline.keeps_repeats,
            track=track,
        )
        if comparison.repeats is not None and (note := comparison.repeats.note(model)):
            notes.append(note)
        if comparison.only_current or comparison.only_baseline or comparison.changed:
            edited = f", {len(comparison.changed)} changed since (not compared)" if comparison.changed else ""
            notes.append(
                f"model {model!r}: paired on the {len(comparison.shared)} samples both runs scored "
                f"({len(comparison.only_current)} only in this run, "
                f"{len(comparison.only_baseline)} only in the baseline{edited})"
            )
        models[model] = comparison
    return RunComparison(baseline, models, unchecked, notes, options, pairing)


def _other_track(
    current: Snapshots,
    baseline: Baseline,
    options: StatsOptions,
    checks: Sequence[CompareFailCheck],
    policy: str,
    track: str,
) -> RunComparison:
    """A baseline saved from a run of another track: no model compared, each check could not be measured."""
    why = f"the baseline was saved from a {baseline.track} run and this is a {track} run: their figures differ"

    def unmeasured(model: str, check: CompareFailCheck) -> CheckResult:
        message = f"COULD NOT BE MEASURED model {model!r}: {why} ({check})"
        return CheckResult(str(check), check.metric, model, None, policy == "fail", message, outcome=UNMEASURED)

    unchecked = [unmeasured(model, check) for model in sorted(current) for check in checks]
    return RunComparison(baseline, {}, unchecked, [f"not compared: {why}"], options, None)
