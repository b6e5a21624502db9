"""Find the references in records, guided by the schemas' `x-kb-ref` annotations.

Each schema property that holds a record id carries `"x-kb-ref": "<kind>"`
(or `"*"` for any kind). Walking a kind's schema once gives path templates such
as `links/*/interconnect -> interconnect`; walking a record along them yields
its references. Bindings (`id#field.path`) are references too, and so are the
templates in prose (`{hardware/x#memory.bandwidth}`, `{flops/y#claim:z}`): a
change to the figure re-checks, and rebuilds the page of, the record that cites it.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from kb.findings import pointer_join
from kb.model import KnowledgeBase, Record, Reference
from kb.prose.fields import record_templates
from kb.schema import load_schemas, schema_name

Template = tuple[tuple[str, ...], str]
_MAX_SCHEMA_DEPTH = 24


@cache
def reference_templates(kind: str) -> tuple[Template, ...]:
    """(path with '*' wildcards, expected kind) for every reference field of `kind`."""
    schema = load_schemas().get(schema_name(kind))
    if schema is None:
        return ()
    found: set[Template] = set()
    _walk_schema(schema, schema, (), found, 0)
    return tuple(sorted(found))


def _walk_schema(
    node: Any, doc: dict[str, Any], path: tuple[str, ...], out: set[Template], depth: int
) -> None:
    if not isinstance(node, dict) or depth > _MAX_SCHEMA_DEPTH:
        return
    if "x-kb-ref" in node:
        out.add((path, str(node["x-kb-ref"])))
    if "$ref" in node:
        target, target_doc = _resolve(node["$ref"], doc)
        _walk_schema(target, target_doc, path, out, depth + 1)
    for key, child in node.get("properties", {}).items():
        _walk_schema(child, doc, (*path, key), out, depth + 1)
    for child in node.get("patternProperties", {}).values():
        _walk_schema(child, doc, (*path, "*"), out, depth + 1)
    for key in ("additionalProperties", "items"):
        _walk_schema(node.get(key), doc, (*path, "*"), out, depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        for child in node.get(key, []):
            _walk_schema(child, doc, path, out, depth + 1)


def _resolve(ref: str, doc: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    file_part, _, fragment = ref.partition("#")
    target_doc = doc
    if file_part:
        target_doc = load_schemas().get(file_part.rsplit("/", 1)[-1], {})
    node: Any = target_doc
    for part in [p for p in fragment.split("/") if p]:
        node = node.get(part) if isinstance(node, dict) else None
    return node, target_doc


def record_references(record: Record) -> Iterator[Reference]:
    """Every reference of one record, with its JSON pointer."""
    for template, kind in reference_templates(record.kind):
        for pointer, value in _follow(record.data, template, ""):
            if isinstance(value, str):
                yield Reference(record.id, pointer, value, kind)
    for pointer, written in record_templates(record.data):
        if written.target:
            yield Reference(record.id, pointer, written.target, "*")


def _follow(node: Any, template: tuple[str, ...], pointer: str) -> Iterator[tuple[str, Any]]:
    if not template:
        yield pointer, node
        return
    head, rest = template[0], template[1:]
    if head == "*":
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for key, child in items:
            yield from _follow(child, rest, pointer_join(pointer, key))
    elif isinstance(node, dict) and head in node:
        yield from _follow(node[head], rest, pointer_join(pointer, head))


def index_references(kb: KnowledgeBase) -> None:
    """Fill kb.references (the "used by" relation) from every record."""
    kb.references = [ref for record in kb for ref in record_references(record)]
