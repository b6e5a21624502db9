"""The physical dimension each quantity field declares, read from the schemas' `x-kb-dimension`.

Every schema field that holds a figure (`{value, unit, ...}`, defs.schema.json's
`quantity`, or a `value` and `unit` of its own) says what the figure measures:

    "capacity": {"$ref": "defs.schema.json#/$defs/quantity", "x-kb-dimension": "B"}

The declaration is a unit whose dimension the figure must have (any unit of that
dimension will do: `B` admits GiB and MB), written in kb.quantities' language (`B`,
`B/s`, `FLOP`, `FLOP/s`, `s`, `W`, `J`, `1/s`, `FLOP/B`, `USD/h`, `1` for a count or
ratio); a list of them where the field admits several (`useful_work` is bytes or
FLOP); or `"*"` where the record itself declares the dimension elsewhere, and kb
checks it there (a claim's bound value against its symbol's unit, EQ012; a receipt's
generic `value` named by its `metric`). Walking a kind's schema once gives path
templates such as `links/*/per_link -> B/s`, as kb.references does for `x-kb-ref`;
rule SC002 follows them through a record and compares each figure's unit.
`quantity_fields` lists every place a figure can stand, declared or not, for the
test that holds every schema to a declaration.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from kb.quantities import Dims, UnitError, format_dims, parse_unit
from kb.references import Trie, follow_all, resolve_schema_ref, template_trie
from kb.resources import ResourceMissing
from kb.schema import load_schemas, schema_name

KEY = "x-kb-dimension"
ANY = "*"
_QUANTITY_REF = "defs.schema.json#/$defs/quantity"
_MAX_SCHEMA_DEPTH = 24

Path = tuple[str, ...]

# What kb calls a figure of each dimension, in a finding's words.
_NAMES: Mapping[str, str] = {
    "1": "a count or ratio (dimensionless)",
    "B": "a size in bytes",
    "B·s^-1": "a bandwidth (bytes per second)",
    "FLOP": "an amount of computation (FLOP)",
    "FLOP·s^-1": "a compute rate (FLOP per second)",
    "B^-1·FLOP": "an arithmetic intensity (FLOP per byte)",
    "s": "a time (seconds)",
    "s^-1": "a rate (per second)",
    "J": "an energy (joules)",
    "J·s^-1": "a power (watts)",
    "USD": "an amount of money (USD)",
    "USD·s^-1": "a cost rate (money per time)",
}


@dataclass(frozen=True)
class Declared:
    """A field's declared dimension: the units as written and their dimensions (empty: any)."""

    written: tuple[str, ...]
    dims: tuple[Dims, ...]

    @property
    def any(self) -> bool:
        return not self.dims

    def admits(self, dims: Dims) -> bool:
        return self.any or dims in self.dims

    def described(self) -> str:
        """`a size in bytes`, `a size in bytes or an amount of computation (FLOP)`."""
        return " or ".join(describe(d) for d in self.dims) or "of any dimension"


def describe(dims: Dims) -> str:
    """What a figure of this dimension is, in words: `a bandwidth (bytes per second)`."""
    text = format_dims(dims)
    return _NAMES.get(text, f"a quantity in {text}")


def declared(value: object) -> Declared:
    """Parse an `x-kb-dimension` value; ValueError names what is wrong with it."""
    written = (value,) if isinstance(value, str) else value
    if not isinstance(written, list | tuple) or not written:
        raise ValueError(f"{KEY} must be a unit, a list of units or {ANY!r}, got {value!r}")
    if written == (ANY,) or written == [ANY]:
        return Declared((ANY,), ())
    texts: list[str] = []
    dims: list[Dims] = []
    for text in written:
        if not isinstance(text, str) or not text.strip() or text == ANY:
            raise ValueError(f"{KEY}: {text!r} is not a unit (write {ANY!r} alone for any)")
        try:
            dims.append(parse_unit(text).dims)
        except UnitError as exc:
            raise ValueError(f"{KEY}: {exc}") from None
        texts.append(text)
    return Declared(tuple(texts), tuple(dims))


@cache
def dimension_templates(kind: str) -> tuple[tuple[Path, Declared], ...]:
    """(path with '*' wildcards, declared dimension) for every declaring field of `kind`."""
    found: dict[Path, Declared] = {}
    for path, node in _walk(kind):
        if KEY in node:
            try:
                found[path] = declared(node[KEY])
            except ValueError as exc:
                # a schema brought with KB_SCHEMAS may declare nonsense: name it, no traceback
                where = "/".join(path) or "(root)"
                raise ResourceMissing(f"schema {schema_name(kind)}, field {where}: {exc}") from None
    return tuple(sorted(found.items(), key=lambda item: item[0]))


@cache
def quantity_fields(kind: str) -> tuple[Path, ...]:
    """Every path of `kind`'s schema at which a figure ({value, unit}) can stand."""
    found = {path for path, node in _walk(kind) if _is_quantity(node)}
    return tuple(sorted(found))


def undeclared(kind: str) -> list[Path]:
    """The quantity fields of `kind` that declare no dimension."""
    declaring = {path for path, _ in dimension_templates(kind)}
    return [path for path in quantity_fields(kind) if path not in declaring]


def figures(kind: str, data: Any) -> Iterator[tuple[str, Mapping[str, Any], Declared]]:
    """Every (pointer, figure, declared dimension) of a record, in template order."""
    for pointer, node, want in _matches(kind, data, ""):
        assert pointer is not None
        yield pointer, node, want


def declared_figures(kind: str, data: Any) -> list[tuple[Mapping[str, Any], Declared]]:
    """`figures` without the pointers, in the same order: a walk that only reads the figures.

    Building a pointer to every figure costs more than checking it, and most records
    have no figure a reader needs to point at (rule SC002 asks this first).
    """
    return [(node, want) for _, node, want in _matches(kind, data, None)]


def _matches(
    kind: str, data: Any, pointer: str | None
) -> Iterator[tuple[str | None, Mapping[str, Any], Declared]]:
    """The declaring templates followed through `data` at once (kb.references.follow_all)."""
    templates = dimension_templates(kind)
    if not templates:
        return
    found: list[list[tuple[str | None, Any]]] = [[] for _ in templates]
    follow_all(data, _trie(kind), pointer, found, Mapping)
    for (_, want), matches in zip(templates, found, strict=True):
        for where, node in matches:
            if (
                (type(node) is dict or isinstance(node, Mapping))
                and "value" in node
                and "unit" in node
            ):
                yield where, node, want


@cache
def _trie(kind: str) -> Trie:
    return template_trie(tuple(path for path, _ in dimension_templates(kind)))


def _is_quantity(node: Mapping[str, Any]) -> bool:
    ref = node.get("$ref", "")
    if isinstance(ref, str) and (ref == _QUANTITY_REF or ref == "#/$defs/quantity"):
        return True
    props = node.get("properties")
    return isinstance(props, Mapping) and "value" in props and "unit" in props


def _walk(kind: str) -> list[tuple[Path, Mapping[str, Any]]]:
    """Every (path, schema node) of `kind`'s schema, $refs followed, '*' for items and keys."""
    schema = load_schemas().get(schema_name(kind))
    out: list[tuple[Path, Mapping[str, Any]]] = []
    if schema is not None:
        _walk_node(schema, schema, (), out, 0)
    return out


def _walk_node(
    node: Any,
    doc: dict[str, Any],
    path: Path,
    out: list[tuple[Path, Mapping[str, Any]]],
    depth: int,
) -> None:
    if not isinstance(node, dict) or depth > _MAX_SCHEMA_DEPTH:
        return
    out.append((path, node))
    if "$ref" in node:
        if _is_quantity(node):
            return  # the figure itself: its value and unit hold no figures
        target, target_doc = resolve_schema_ref(node["$ref"], doc)
        _walk_node(target, target_doc, path, out, depth + 1)
    for key, child in node.get("properties", {}).items():
        _walk_node(child, doc, (*path, key), out, depth + 1)
    for child in node.get("patternProperties", {}).values():
        _walk_node(child, doc, (*path, "*"), out, depth + 1)
    for key in ("additionalProperties", "items"):
        _walk_node(node.get(key), doc, (*path, "*"), out, depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        for child in node.get(key, []):
            _walk_node(child, doc, path, out, depth + 1)
