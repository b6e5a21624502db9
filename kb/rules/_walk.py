"""Walk a record's document for figures (quantities) and provenance blocks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kb.findings import pointer_join


def nodes(data: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Every (pointer, value) of a JSON-like document, depth first, iteratively."""
    stack: list[tuple[str, Any]] = [(pointer, data)]
    while stack:
        here, node = stack.pop()
        yield here, node
        if isinstance(node, Mapping):
            stack.extend((pointer_join(here, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((pointer_join(here, i), v) for i, v in reversed(list(enumerate(node))))


def containers(data: Any) -> Iterator[tuple[str, Any]]:
    """The (pointer, mapping or list) pairs of `nodes`, in the same order, without the scalars.

    The figure walks need only mappings; skipping scalars and escaping a key only
    when it holds `~` or `/` makes them several times faster on large trees.
    """
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        here, node = stack.pop()
        yield here, node
        if isinstance(node, Mapping):
            items = [(k, v) for k, v in node.items() if _is_container(v)]
        elif isinstance(node, list):
            items = [(i, v) for i, v in enumerate(node) if _is_container(v)]
        else:
            continue
        stack.extend((_child(here, key), value) for key, value in reversed(items))


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _is_container(value: Any) -> bool:
    return type(value) not in _SCALARS and isinstance(value, (Mapping, list))


def _child(pointer: str, key: Any) -> str:
    token = str(key)
    if "~" in token or "/" in token:
        return pointer_join(pointer, token)
    return f"{pointer}/{token}"


def is_quantity(node: Any) -> bool:
    return isinstance(node, Mapping) and "value" in node and "unit" in node


def quantities(data: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every quantity ({value, unit, ...}) of a document with its pointer."""
    for pointer, node in containers(data):
        if is_quantity(node):
            yield pointer, node


def provenance_blocks(data: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every mapping that states a `basis` (quantities, geometry blocks, parameter rows)."""
    for pointer, node in containers(data):
        if isinstance(node, Mapping) and "basis" in node:
            yield pointer, node
