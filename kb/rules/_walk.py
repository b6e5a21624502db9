"""Walk a record's document for figures (quantities) and provenance blocks."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kb.findings import pointer_join
from kb.model import KnowledgeBase, Record
from kb.run import Kept


def containers(data: Any) -> Iterator[tuple[str, Any]]:
    """Every (pointer, mapping or list) of a JSON-like document, depth first, iteratively.

    The figure walks need only mappings; skipping scalars, testing plain dicts and
    lists by type before the (slow) abstract Mapping check, and escaping a key only
    when it holds `~` or `/` make them several times faster on large trees.
    """
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        here, node = stack.pop()
        yield here, node
        if _is_mapping(node):
            items = [(k, v) for k, v in node.items() if _is_container(v)]
        elif isinstance(node, list):
            items = [(i, v) for i, v in enumerate(node) if _is_container(v)]
        else:
            continue
        stack.extend((_child(here, key), value) for key, value in reversed(items))


# Each record's mappings, by display path, walked once per run for the rules that read them.
MAPPINGS: Kept[dict[str, list[tuple[str, Mapping[str, Any]]]]] = Kept("mappings")
NODES: Kept[dict[str, list[Mapping[str, Any]]]] = Kept("provenance nodes")
_SCALARS = frozenset({str, int, float, bool, type(None)})
_PLAIN = frozenset({dict, list})


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or (type(value) is not list and isinstance(value, Mapping))


def _is_container(value: Any) -> bool:
    kind = type(value)
    return kind in _PLAIN or (kind not in _SCALARS and isinstance(value, (Mapping, list)))


def _child(pointer: str, key: Any) -> str:
    token = str(key)
    if "~" in token or "/" in token:
        return pointer_join(pointer, token)
    return f"{pointer}/{token}"


def mappings(data: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """Every mapping of a document with its pointer, in `containers` order."""
    return [(pointer, node) for pointer, node in containers(data) if _is_mapping(node)]


def quantities(data: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every quantity ({value, unit, ...}) of a document with its pointer."""
    return ((p, node) for p, node in mappings(data) if "value" in node and "unit" in node)


def record_mappings(kb: KnowledgeBase, record: Record) -> list[tuple[str, Mapping[str, Any]]]:
    """`mappings(record.data)`, walked once per run for the several rules that need it."""
    memo = kb.run.once(MAPPINGS, dict)
    found = memo.get(record.path)
    if found is None:
        found = memo[record.path] = mappings(record.data)
    return found


def located(
    kb: KnowledgeBase, record: Record, wanted: Callable[[Mapping[str, Any]], bool]
) -> list[tuple[str, Mapping[str, Any]]]:
    """The record's provenance nodes that `wanted` picks, with their pointers, in document order.

    A provenance node is a mapping holding a figure (`value` and `unit`) or a `basis`
    (`provenance`): what the provenance rules (PV001-PV003) read, and only those. One
    walk per record and run collects them, without pointers, for the three rules
    (`_record_nodes`); most records have none that a rule picks, and only a record that
    has one pays for a pointer to every mapping.
    """
    if not any(wanted(node) for node in _record_nodes(kb, record)):
        return []
    return [
        (pointer, node)
        for pointer, node in record_mappings(kb, record)
        if provenance(node) and wanted(node)
    ]


def provenance(node: Mapping[str, Any]) -> bool:
    """Whether a mapping holds a figure (`value` and `unit`) or names a `basis`."""
    return "basis" in node or ("value" in node and "unit" in node)


def _record_nodes(kb: KnowledgeBase, record: Record) -> list[Mapping[str, Any]]:
    memo = kb.run.once(NODES, dict)
    found = memo.get(record.path)
    if found is None:
        found = memo[record.path] = _provenance_nodes(record.data)
    return found


def _provenance_nodes(data: Any) -> list[Mapping[str, Any]]:
    """Every provenance node of a document (`provenance`), in no particular order.

    Plain dicts and lists are told by their type; only other objects take the (slow)
    abstract checks.
    """
    found: list[Mapping[str, Any]] = []
    stack = [data]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            if "basis" in node or ("value" in node and "unit" in node):
                found.append(node)
            values: Any = node.values()
        elif kind is list:
            values = node
        elif _is_mapping(node):
            if provenance(node):
                found.append(node)
            values = node.values()
        elif isinstance(node, list):
            values = node
        else:
            continue
        for value in values:
            kind = type(value)
            if kind is dict or kind is list or (kind not in _SCALARS and _is_container(value)):
                stack.append(value)
    return found
