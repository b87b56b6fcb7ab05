"""Named subsets of samples (conditions on gold fields and metadata) and ``group_by``, with their metrics and gates.

A subsets file (JSON, or YAML with ``.yaml``/``.yml``) looks like::

    {
      "subsets": [
        {"name": "high-value",
         "conditions": [{"field": "total_amount", "operator": "gte", "value": 10000}],
         "aggregation": "mean",
         "compare_fail": ["eqs:-0.05"]}
      ],
      "group_by": ["topic", {"field": "complexity_bin", "compare_fail": ["eqs:-0.1"]}]
    }

A sample is in a subset when every condition holds. ``field`` names a gold field
by its leaf path (``total_amount``, ``contact.email``) or sample metadata
(``topic``, ``medium``, ``complexity_bin`` or ``complexity.total_fields``); the
prefixes ``gold.`` and ``meta.`` choose explicitly, and a bare name is looked up
in the gold first. A field the sample lacks satisfies only ``neq`` and
``not_contains``. ``aggregation`` (mean or median) turns the subset's per-sample
EQS into its ``score``; every subset and group also gets the headline metrics
with confidence intervals. The same mapping can be embedded in a configuration
file and passed to :meth:`SubsetConfig.from_data`.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis import catalog
from ..analysis.resampled import Columns, confidence_intervals, metric_values
from ..core import jsonio, userfiles
from ..core.errors import ExtractbenchError
from ..dataset.records import SampleRecord
from ..scoring import StatsOptions
from ..scoring.result import SPURIOUS
from ..scoring.schema import PatternError, check_pattern, regex_search
from .regression import CompareFailCheck, Scope, parse_compare_fail

OPERATORS = ("eq", "neq", "gt", "gte", "lt", "lte", "contains", "not_contains", "regex")
AGGREGATIONS: dict[str, Callable[[Sequence[float]], Any]] = {"mean": np.mean, "median": np.median}
MISSING_GROUP = "(missing)"
_ABSENT = object()


class SubsetConfigError(ExtractbenchError, ValueError):
    """Every problem of a subsets configuration, each with its key path."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        super().__init__(f"{source}: " + "; ".join(problems))
        self.problems = list(problems)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _ordered(actual: Any, expected: Any, compare: Callable[[Any, Any], bool]) -> bool:
    if _number(actual) and _number(expected):
        return compare(actual, expected)
    if isinstance(actual, str) and isinstance(expected, str):  # ISO dates compare as strings
        return compare(actual, expected)
    return False


def _equal(actual: Any, expected: Any) -> bool:
    if _number(actual) and _number(expected):
        return math.isclose(actual, expected, rel_tol=0, abs_tol=1e-12)
    return bool(actual == expected)


def _contains(actual: Any, expected: Any) -> bool:
    if isinstance(actual, str):
        return isinstance(expected, str) and expected in actual
    if isinstance(actual, (list, tuple)):
        return any(_equal(item, expected) for item in actual)
    return False


@dataclass(frozen=True)
class Condition:
    """``field`` ``operator`` ``value``; a regex runs on the schema patterns' bounded engine (linear time), so a
    catastrophic pattern such as ``^(a+)+$`` cannot spin."""

    field: str
    operator: str
    value: Any

    def matches(self, actual: Any) -> bool:
        op = self.operator
        if actual is _ABSENT:
            return op in ("neq", "not_contains")
        if op == "eq":
            return _equal(actual, self.value)
        if op == "neq":
            return not _equal(actual, self.value)
        if op == "gt":
            return _ordered(actual, self.value, lambda a, b: a > b)
        if op == "gte":
            return _ordered(actual, self.value, lambda a, b: a >= b)
        if op == "lt":
            return _ordered(actual, self.value, lambda a, b: a < b)
        if op == "lte":
            return _ordered(actual, self.value, lambda a, b: a <= b)
        if op == "contains":
            return _contains(actual, self.value)
        if op == "not_contains":
            return not _contains(actual, self.value)
        if actual is None or isinstance(actual, (dict, list)):
            return False
        try:
            return regex_search(self.value, str(actual))
        except PatternError:  # too much backtracking (a backreference): the sample is not in the subset
            return False

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "operator": self.operator, "value": self.value}


@dataclass(frozen=True)
class SubsetRule:
    """A named subset: samples meeting every condition."""

    name: str
    conditions: tuple[Condition, ...]
    aggregation: str = "mean"
    compare_fail: tuple[CompareFailCheck, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "conditions": [c.as_dict() for c in self.conditions],
            "aggregation": self.aggregation,
            "compare_fail": [str(c) for c in self.compare_fail],
        }


@dataclass(frozen=True)
class GroupBy:
    """Split the samples by the values of one field; each group can carry checks."""

    field: str
    aggregation: str = "mean"
    compare_fail: tuple[CompareFailCheck, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "aggregation": self.aggregation,
            "compare_fail": [str(c) for c in self.compare_fail],
        }


@dataclass(frozen=True)
class SubsetConfig:
    """Rules and groupings of one subsets file."""

    rules: tuple[SubsetRule, ...] = ()
    group_by: tuple[GroupBy, ...] = ()
    source: str = "<subsets>"

    @classmethod
    def from_data(cls, data: Any, source: str = "<subsets>") -> SubsetConfig:
        """Validate a parsed mapping; every problem is reported at once with its key path."""
        problems: list[str] = []
        if not isinstance(data, Mapping):
            raise SubsetConfigError(source, ["the top level must be a mapping with 'subsets' and/or 'group_by'"])
        for key in sorted(set(data) - {"subsets", "group_by"}):
            problems.append(f"{key}: unknown key (expected 'subsets' and/or 'group_by')")
        rules = []
        raw_rules = data.get("subsets") or []
        if not isinstance(raw_rules, list):
            problems.append("subsets: must be a list of rules")
            raw_rules = []
        names: set[str] = set()
        for index, raw in enumerate(raw_rules):
            rule = _rule(raw, f"subsets[{index}]", problems)
            if rule is not None:
                if rule.name in names:
                    problems.append(f"subsets[{index}].name: duplicate name {rule.name!r}")
                names.add(rule.name)
                rules.append(rule)
        groups = []
        raw_groups = data.get("group_by") or []
        if isinstance(raw_groups, (str, Mapping)):
            raw_groups = [raw_groups]
        if not isinstance(raw_groups, list):
            problems.append("group_by: must be a field name, a mapping or a list of them")
            raw_groups = []
        for index, raw in enumerate(raw_groups):
            group = _group(raw, f"group_by[{index}]", problems)
            if group is not None:
                groups.append(group)
        if problems:
            raise SubsetConfigError(source, problems)
        return cls(tuple(rules), tuple(groups), source)

    def as_dict(self) -> dict[str, Any]:
        return {"subsets": [r.as_dict() for r in self.rules], "group_by": [g.as_dict() for g in self.group_by]}


def _checks(raw: Any, where: str, problems: list[str]) -> tuple[CompareFailCheck, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        problems.append(f"{where}: must be a list of METRIC:MARGIN expressions")
        return ()
    checks = []
    for index, expr in enumerate(raw):
        try:
            checks.append(parse_compare_fail(str(expr)))
        except argparse.ArgumentTypeError as exc:
            problems.append(f"{where}[{index}]: {exc}")
    return tuple(checks)


def _aggregation(raw: Mapping[str, Any], where: str, problems: list[str]) -> str:
    aggregation = raw.get("aggregation", "mean")
    if aggregation not in AGGREGATIONS:
        problems.append(f"{where}.aggregation: {aggregation!r} is not one of {', '.join(AGGREGATIONS)}")
        return "mean"
    return str(aggregation)


def _rule(raw: Any, where: str, problems: list[str]) -> SubsetRule | None:
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: a rule must be a mapping with name and conditions")
        return None
    for key in sorted(set(raw) - {"name", "conditions", "aggregation", "compare_fail"}):
        problems.append(f"{where}.{key}: unknown key")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append(f"{where}.name: a non-empty string is required")
        name = None
    raw_conditions = raw.get("conditions")
    if not isinstance(raw_conditions, list) or not raw_conditions:
        problems.append(f"{where}.conditions: a non-empty list is required")
        raw_conditions = []
    conditions = [c for i, r in enumerate(raw_conditions) if (c := _condition(r, f"{where}.conditions[{i}]", problems))]
    aggregation = _aggregation(raw, where, problems)
    checks = _checks(raw.get("compare_fail"), f"{where}.compare_fail", problems)
    if name is None or len(conditions) != len(raw_conditions):
        return None
    return SubsetRule(name, tuple(conditions), aggregation, checks)


def _condition(raw: Any, where: str, problems: list[str]) -> Condition | None:
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: a condition must be a mapping with field, operator and value")
        return None
    for key in sorted(set(raw) - {"field", "operator", "value"}):
        problems.append(f"{where}.{key}: unknown key")
    name, op = raw.get("field"), raw.get("operator")
    ok = isinstance(name, str) and bool(name)
    if not ok:
        problems.append(f"{where}.field: a field name is required")
    if op not in OPERATORS:
        problems.append(f"{where}.operator: {op!r} is not one of {', '.join(OPERATORS)}")
        return None
    if "value" not in raw:
        problems.append(f"{where}.value: required")
        return None
    value = raw["value"]
    if op in ("gt", "gte", "lt", "lte") and not (_number(value) or isinstance(value, str)):
        problems.append(f"{where}.value: {op} needs a number or a string, got {type(value).__name__}")
        ok = False
    elif _number(value) and not math.isfinite(value):  # .inf, 1e999 or nan: a bound every value meets, or none
        problems.append(f"{where}.value: must be a finite number, got {value!r}")
        ok = False
    if op == "regex":
        if not isinstance(value, str):
            problems.append(f"{where}.value: regex needs a string pattern")
            return None
        try:
            check_pattern(value)
        except PatternError as exc:
            problems.append(f"{where}.value: invalid regex {value!r}: {exc}")
            return None
    return Condition(str(name), op, value) if ok else None


def _group(raw: Any, where: str, problems: list[str]) -> GroupBy | None:
    if isinstance(raw, str) and raw:
        return GroupBy(raw)
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: a field name or a mapping with 'field'")
        return None
    for key in sorted(set(raw) - {"field", "aggregation", "compare_fail"}):
        problems.append(f"{where}.{key}: unknown key")
    name = raw.get("field")
    if not isinstance(name, str) or not name:
        problems.append(f"{where}.field: a field name is required")
        return None
    return GroupBy(
        name, _aggregation(raw, where, problems), _checks(raw.get("compare_fail"), f"{where}.compare_fail", problems)
    )


def load_subsets(path: str | Path) -> SubsetConfig:
    """Read a JSON or YAML subsets file; raises :class:`SubsetConfigError` (or ``OSError``)."""
    path = Path(path)
    if path.suffix.lower() not in (".yaml", ".yml"):
        try:
            data = jsonio.load_file(path)
        except jsonio.JsonInputError as exc:
            raise SubsetConfigError(str(path), [f"line {exc.line or 1}: {exc}"]) from None
        return SubsetConfig.from_data(data, str(path))
    import yaml  # only YAML files need it

    from ..core.yamlio import safe_load

    try:
        text = userfiles.read_text(path, userfiles.TEXT_LIMIT, "utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SubsetConfigError(str(path), [f"not UTF-8 (byte {exc.start}); save the file as UTF-8"]) from None
    try:
        data = safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SubsetConfigError(str(path), [f"{where}not valid YAML: {problem}"]) from None
    return SubsetConfig.from_data(data, str(path))


# -- field values -----------------------------------------------------------------------------------


def _dig(data: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(data, Mapping) and part in data:
            data = data[part]
        else:
            return _ABSENT
    return data


class _Lookup:
    """Field values of records, with each record's gold leaves indexed once."""

    def __init__(self) -> None:
        self._gold: dict[int, dict[str, Any]] = {}

    def gold(self, record: SampleRecord, path: str) -> Any:
        leaves = self._gold.get(id(record))
        if leaves is None:
            leaves = {f.path: f.expected for f in record.score.fields if f.category != SPURIOUS}
            self._gold[id(record)] = leaves
        return leaves.get(path, _ABSENT)

    def meta(self, record: SampleRecord, path: str) -> Any:
        found = _dig(record.meta, path)
        if found is _ABSENT:  # complexity features by their own name: complexity_bin, total_fields, ...
            found = _dig(record.meta.get("complexity") or {}, path)
        return found

    def value(self, record: SampleRecord, name: str) -> Any:
        if name in ("id", "sample_id"):
            return record.sample_id
        if name.startswith("gold."):
            return self.gold(record, name[5:])
        if name.startswith("meta."):
            return self.meta(record, name[5:])
        found = self.gold(record, name)
        return self.meta(record, name) if found is _ABSENT else found


def _group_key(value: Any) -> str:
    if value is _ABSENT or value is None:
        return MISSING_GROUP
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def members(
    records: Iterable[SampleRecord], config: SubsetConfig
) -> tuple[dict[str, list[SampleRecord]], dict[str, dict[str, list[SampleRecord]]]]:
    """Records of each subset, and of each group of each ``group_by`` field."""
    lookup = _Lookup()
    records = list(records)
    subsets = {
        rule.name: [r for r in records if all(c.matches(lookup.value(r, c.field)) for c in rule.conditions)]
        for rule in config.rules
    }
    groups: dict[str, dict[str, list[SampleRecord]]] = {}
    for group in config.group_by:
        split: dict[str, list[SampleRecord]] = {}
        for record in records:
            split.setdefault(_group_key(lookup.value(record, group.field)), []).append(record)
        groups[group.field] = dict(sorted(split.items()))
    return subsets, groups


def _summary(records: Sequence[SampleRecord], aggregation: str, options: StatsOptions) -> dict[str, Any]:
    out: dict[str, Any] = {"count": len(records), "aggregation": aggregation}
    if not records:
        return out
    rows = Columns([r.score for r in records])
    out["score"] = float(AGGREGATIONS[aggregation](rows.column("eqs").tolist()))
    out["metrics"] = metric_values(rows, catalog.names("headline"))
    out["confidence_intervals"] = {
        k: v.as_dict() for k, v in confidence_intervals(rows, options, catalog.names("headline")).items()
    }
    out["sample_ids"] = [r.sample_id for r in records]
    return out


def subset_metrics(records: Sequence[SampleRecord], config: SubsetConfig, options: StatsOptions) -> dict[str, Any]:
    """``{"subsets": {name: summary}, "groups": {field: {value: summary}}}`` for one model's records."""
    subsets, groups = members(records, config)
    rules = {rule.name: rule for rule in config.rules}
    aggregations = {group.field: group.aggregation for group in config.group_by}
    return {
        "subsets": {name: _summary(found, rules[name].aggregation, options) for name, found in subsets.items()},
        "groups": {
            name: {value: _summary(found, aggregations[name], options) for value, found in split.items()}
            for name, split in groups.items()
        },
    }


def gate_scopes(records: Sequence[SampleRecord], config: SubsetConfig) -> list[Scope]:
    """The subsets and groups that carry compare-fail checks, with the sample ids they hold in this run."""
    subsets, groups = members(records, config)
    scopes = [
        Scope(f"subset {rule.name!r}", frozenset(r.sample_id for r in subsets[rule.name]), rule.compare_fail)
        for rule in config.rules
        if rule.compare_fail
    ]
    for group in config.group_by:
        if group.compare_fail:
            for value, found in groups[group.field].items():
                scopes.append(
                    Scope(f"group {group.field}={value!r}", frozenset(r.sample_id for r in found), group.compare_fail)
                )
    return scopes
