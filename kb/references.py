"""Find the references in records, guided by the schemas' `x-kb-ref` annotations.

Each schema property that holds a record id carries `"x-kb-ref": "<kind>"`
(or `"*"` for any kind). Walking a kind's schema once gives path templates such
as `links/*/interconnect -> interconnect`; walking a record along them yields
its references. Bindings (`id#field.path`) are references too, and so are the
templates in prose (`{hardware/x#memory.bandwidth}`, `{flops/y#claim:z}`): a
change to the figure re-checks, and rebuilds the page of, the record that cites it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from kb.findings import pointer_join
from kb.model import Record, Reference
from kb.prose.fields import record_templates
from kb.schema import load_schemas, schema_name

if TYPE_CHECKING:
    from kb.prose.scan import Template as Written

Template = tuple[tuple[str, ...], str]
# A reference's pointer (`/links/0/interconnect`) repeats in every record of its kind:
# interned, the references of 100,000 records hold one string per pointer, not 800,000.
_intern = sys.intern
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
        target, target_doc = resolve_schema_ref(node["$ref"], doc)
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


def resolve_schema_ref(ref: str, doc: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The node a JSON Schema `$ref` names, and the schema document holding it."""
    file_part, _, fragment = ref.partition("#")
    target_doc = doc
    if file_part:
        target_doc = load_schemas().get(file_part.rsplit("/", 1)[-1], {})
    node: Any = target_doc
    for part in [p for p in fragment.split("/") if p]:
        node = node.get(part) if isinstance(node, dict) else None
    return node, target_doc


def record_references(
    record: Record, written: Sequence[tuple[str, Written]] | None = None
) -> Iterator[Reference]:
    """Every reference of one record, with its JSON pointer.

    In template order, each template's matches in document order (as following each
    template on its own finds them); the templates are walked together (`_tree`), so a
    prefix they share (`claims/*/bind/*`) is walked once. `written`: the record's prose
    templates (kb.prose.fields.record_templates) when the caller has them already.
    """
    for pointer, target, kind in reference_rows(record, written):
        yield Reference(record.id, pointer, target, kind)


def reference_rows(
    record: Record, written: Sequence[tuple[str, Written]] | None = None
) -> Iterator[tuple[str, str, str]]:
    """`record_references` as (pointer, target, expected kind) rows, as the record cache keeps them.

    The per-file stage keeps rows (kb.checker.check_file): making a Reference of each
    only to take it apart again cost a frozen dataclass per reference (~8 a record).
    """
    templates = reference_templates(record.kind)
    if templates:
        found: list[list[tuple[str | None, Any]]] = [[] for _ in templates]
        follow_all(record.data, _tree(record.kind), "", found)
        for (_, kind), matches in zip(templates, found, strict=True):
            for pointer, value in matches:
                if isinstance(value, str) and pointer is not None:
                    yield _intern(pointer), value, kind
    for pointer, template in record_templates(record.data) if written is None else written:
        if template.target:
            yield _intern(pointer), template.target, "*"


# A trie of path templates: (indexes of the templates that end here, children by step).
Trie = tuple[list[int], dict[str, "Trie"]]


@cache
def _tree(kind: str) -> Trie:
    """reference_templates(kind) as a trie of their steps (`*`: every item or key)."""
    return template_trie(tuple(template for template, _ in reference_templates(kind)))


def template_trie(templates: tuple[tuple[str, ...], ...]) -> Trie:
    """Path templates (`*`: every item or key) as a trie of their steps, by their index."""
    root: Trie = ([], {})
    for index, template in enumerate(templates):
        node = root
        for step in template:
            node = node[1].setdefault(step, ([], {}))
        node[0].append(index)
    return root


def follow_all(
    node: Any,
    trie: Trie,
    pointer: str | None,
    found: list[list[tuple[str | None, Any]]],
    mapping: Any = dict,
) -> None:
    """Add (pointer, value) under every template of `trie` that `node` matches, in order.

    Each template's matches come in document order, as following that template on its
    own finds them; a prefix templates share is walked once. `pointer` None builds no
    pointers (each match is (None, value)): a walk that only looks at the values.
    `mapping`: what counts as a mapping to step into (a plain dict is told by its type).
    """
    ends, steps = trie
    for index in ends:
        found[index].append((pointer, node))
    if not steps:  # most calls: a template ends here and none goes on
        return
    is_mapping = type(node) is dict or isinstance(node, mapping)
    for head, rest in steps.items():
        if head != "*":
            if is_mapping and head in node:
                where = None if pointer is None else _joined(pointer, head)
                follow_all(node[head], rest, where, found, mapping)
        elif is_mapping:
            for key, child in node.items():
                where = None if pointer is None else _joined(pointer, key)
                follow_all(child, rest, where, found, mapping)
        elif isinstance(node, list):
            for index, child in enumerate(node):
                where = None if pointer is None else f"{pointer}/{index}"
                follow_all(child, rest, where, found, mapping)


def _joined(pointer: str, key: Any) -> str:
    """pointer_join(pointer, key), escaping only a key that needs it."""
    token = str(key)
    if "~" in token or "/" in token:
        return pointer_join(pointer, token)
    return f"{pointer}/{token}"
