"""The one reader of user YAML (config and subsets files): ``yaml.safe_load`` with limits.

A key given twice in one mapping is refused (PyYAML keeps the last one silently, so a setting the user reads
near the top may not be the one that applies), and so is a number longer than :data:`MAX_DIGITS` characters.

``safe_load`` builds objects only from plain YAML, but it still lets aliases make a structure
refer to itself (``&a [*a]``: every later walk recurses forever) or expand exponentially (a
578-byte "billion laughs" file stands for 10^9 values once anything walks or serializes it).
This loader refuses both while composing, before anything is built, and turns deep nesting into
a YAML error instead of a ``RecursionError``. Every failure is a ``yaml.MarkedYAMLError``, so
callers report the line and column as for any other YAML mistake.
"""

from __future__ import annotations

from typing import Any

import yaml

from .errors import ExtractbenchError

MAX_BYTES = 4 * 1024 * 1024
"""Largest YAML text read (a config or subsets file is a few kilobytes)."""
MAX_VALUES = 100_000
"""Most values a document may stand for once its aliases are expanded."""
MAX_DIGITS = 100
"""Longest number read: Python refuses to convert integers past 4,300 digits, and no option needs 100."""
_MERGE = "tag:yaml.org,2002:merge"
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


class YamlLimitError(ExtractbenchError, yaml.MarkedYAMLError):
    """The text is YAML, but beyond what a config file may be."""


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._open_anchors: set[str] = set()

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]  # types-PyYAML leaves it unannotated
            if event.anchor in self._open_anchors:  # the alias sits inside its own anchor
                raise YamlLimitError(
                    None,
                    None,
                    f"the alias *{event.anchor} refers to a value that contains it (a recursive alias)",
                    event.start_mark,
                )
            return super().compose_node(parent, index)
        anchor = self.peek_event().anchor  # type: ignore[no-untyped-call]  # as above
        if anchor is None:
            return super().compose_node(parent, index)
        self._open_anchors.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self._open_anchors.discard(anchor)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        # before PyYAML merges "<<" keys into the mapping: only keys written twice in it are duplicates
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE or not isinstance(key_node, yaml.ScalarNode):
                continue
            key = (key_node.tag, key_node.value)
            if key in seen:
                raise YamlLimitError(
                    None,
                    None,
                    f"duplicate key {key_node.value!r} (first on line {seen[key].line + 1}); give each key once",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep)

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        if node.tag in _NUMBER_TAGS and isinstance(node, yaml.ScalarNode) and len(node.value) > MAX_DIGITS:
            raise YamlLimitError(
                None,
                None,
                f"a number of {len(node.value):,} characters; at most {MAX_DIGITS} are read",
                node.start_mark,
            )
        return super().construct_object(node, deep)

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None:
            _check_size(node)
        return node


def _check_size(root: Any) -> None:
    """Refuse a document whose aliases expand to more than :data:`MAX_VALUES` values."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:  # post-order without recursion; shared (aliased) nodes are sized once
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if not done and children:
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        size = 1 + sum(sizes[id(child)] for child in children)
        sizes[id(node)] = size
        if size > MAX_VALUES:
            raise YamlLimitError(
                None,
                None,
                f"the document expands to more than {MAX_VALUES:,} values through its "
                "aliases (a 'billion laughs' file?)",
                node.start_mark,
            )


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)`` within the limits above; raises ``yaml.YAMLError``."""
    if len(text) > MAX_BYTES:
        raise YamlLimitError(None, None, f"the text is {len(text):,} characters; at most {MAX_BYTES:,} are read", None)
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    except RecursionError:
        raise YamlLimitError(None, None, "nested too deeply", None) from None
    finally:
        loader.dispose()
