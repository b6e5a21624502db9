"""The offline search index: a small JS file (`window.SEARCH_INDEX = [...]`).

A script file rather than fetched JSON, so search works from file:// as well as
over http. Entries carry id, title, kind, URL, a short text and the record's
figures and short terms; the index is written with sorted keys so two builds
produce the same bytes.

The text is what the page shows, not what the YAML says: a template such as
`{hardware/h100#memory.bandwidth}` is indexed as its value and unit (prose_view).
Figures are indexed as authored and in the readable unit of their dimension
(`3350 GB/s` is also `3.35 TB/s`, kb/numfmt.py), so a reader finds a figure by
either number. Short string leaves (`HBM3e`, `all-reduce`) are terms. Matching
(prefix, typo-tolerant, kinds filter) is static/search.js.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kb import numfmt
from kb.model import KnowledgeBase, Record
from kb.quantities import BINARY, DECIMAL
from kb.sitegen import inline_code, urls
from kb.sitegen.prose_view import has_markup, prose_parts

TEXT_FIELDS = ("summary", "text", "notes", "change")
TEXT_LIMIT = 400
TERM_LIMIT = 40  # a string leaf longer than this is prose, not a term
FIELD_LIMIT = 600  # characters of figures, and of terms, per entry
QUANTITY_LIMIT = 60  # figures per entry a query in a unit (`4800 GB/s`) can find
SKIPPED = ("history", "waivers", "id", "kind", "title", "version", "status", *TEXT_FIELDS)


def search_entry(record: Record, kb: KnowledgeBase) -> dict[str, Any]:
    """A record's entry: what it reads is the record and those its templates show."""
    figures, found = figures_and_quantities(record.data)
    return {
        "id": record.id,
        "title": record.title,
        "kind": record.kind,
        "url": urls.record_page(record.id),
        "text": record_text(record, kb),
        "figures": _cut(" ".join(dict.fromkeys(figures))),
        "terms": _cut(" ".join(dict.fromkeys(term_texts(record.data)))),
        "symbols": " ".join(symbol_forms(record.data)),
        "quantities": found[:QUANTITY_LIMIT],
    }


def _cut(text: str) -> str:
    return text[:FIELD_LIMIT].rsplit(" ", 1)[0] if len(text) > FIELD_LIMIT else text


def record_text(record: Record, kb: KnowledgeBase | None = None) -> str:
    """Return a record's searchable prose as rendered, whitespace-collapsed and cut."""
    parts = [
        rendered(str(record.data[key]), record, kb) for key in TEXT_FIELDS if record.data.get(key)
    ]
    tags = record.data.get("tags")
    if isinstance(tags, list):
        parts.append(" ".join(str(t) for t in tags))
    return inline_code.plain(" ".join(" ".join(parts).split()))[:TEXT_LIMIT]


def rendered(text: str, record: Record, kb: KnowledgeBase | None) -> str:
    """Prose with each template shown as its value and unit, as the page shows it."""
    if kb is None or not has_markup(text):
        return text
    pieces = []
    for part in prose_parts(text, kb, record):
        if part["kind"] == "figure":
            pieces.append(f"{part['value']} {part['unit']}".strip())
        else:
            pieces.append(str(part["text"]))
    return "".join(pieces)


def figure_texts(node: Any) -> list[str]:
    """Every quantity as authored (`3350 GB/s`) and in its readable unit (`3.35 TB/s`)."""
    return figures_and_quantities(node)[0]


def quantities(node: Any) -> list[list[Any]]:
    """Every figure as `[field path, value in base units, dimension, shown]`.

    search.js reads a typed figure (`4800 GB/s`, `4.8TB/s`) into base units with
    `window.SEARCH_UNITS` and finds it here in whichever unit it was authored.
    """
    return figures_and_quantities(node)[1]


def figures_and_quantities(node: Any) -> tuple[list[str], list[list[Any]]]:
    """`figure_texts` and `quantities` of one record's data, from one walk of it.

    A field named in SKIPPED is passed over by both. `quantities` also passes over a
    field whose dotted path ends in such a name (a key `x.id`); its path joins the keys
    and list indexes with dots (tests/site/test_search_walk.py holds both lists to the
    two separate walks they replace).
    """
    figures: list[str] = []
    found: list[list[Any]] = []
    _walk(figures, found, node, [], True)
    return figures, found


_LEAVES = frozenset((str, int, float, bool, type(None)))


def _walk(
    figures: list[str], found: list[list[Any]], node: Any, path: list[str], counted: bool
) -> None:
    """Collect below `node` (at `path`); `counted`: its quantities go to `found` too."""
    kind = type(node)
    if kind in _LEAVES:  # most nodes: neither a mapping nor a list
        return
    if kind is dict or isinstance(node, Mapping):
        if "value" in node and "unit" in node:
            _quantity(figures, found if counted else None, path, node)
            return
        for key, child in node.items():
            name = str(key)
            if name in SKIPPED:
                continue
            path.append(name)
            _walk(figures, found, child, path, counted and name.rpartition(".")[2] not in SKIPPED)
            path.pop()
    elif isinstance(node, list):
        for index, child in enumerate(node):
            path.append(str(index))
            _walk(figures, found, child, path, counted)
            path.pop()


def _quantity(
    figures: list[str], found: list[list[Any]] | None, path: list[str], node: Mapping[str, Any]
) -> None:
    value, unit = node.get("value"), str(node.get("unit"))
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return
    forms, base = _figure(str(value), unit)
    figures.extend(forms)
    number = _float(base[0]) if base is not None else None
    if base is not None and number is not None and found is not None:
        found.append([_dotted(path), number, base[1], forms[-1]])


def _float(exact: Fraction) -> float | None:
    """`exact` as the index's JSON number, or None past the float range (`1e400`).

    Such a figure's text forms stay searchable; the page's comparison of numbers leaves it out.
    """
    try:
        return float(exact)
    except OverflowError:
        return None


def _dotted(path: list[str]) -> str:
    """The keys joined by dots, a leading empty key dropped as the path's start."""
    text = ""
    for name in path:
        text = f"{text}.{name}" if text else name
    return text


def _figure_forms(value: str, unit: str) -> tuple[str, ...]:
    """A figure (its text) as authored and in its readable unit."""
    return _figure(value, unit)[0]


@functools.lru_cache(maxsize=8192)
def _figure(value: str, unit: str) -> tuple[tuple[str, ...], tuple[Fraction, str] | None]:
    """A figure's forms (`_figure_forms`) and its exact value in base units, once per figure.

    The value comes with its dimension (the unit itself where kb does not know the unit);
    None when the text is not a number. Keyed by the figure's text and unit.
    """
    shown = numfmt.unit_text(unit) if unit != "1" else ""
    authored = f"{value} {shown}".strip()
    scale = _unit_scale(unit)
    try:
        exact = Fraction(value) * (scale[0] if scale is not None else 1)
    except (ValueError, ZeroDivisionError):
        return (authored,), None
    if scale is None:
        return (authored,), (exact, unit)
    if scale[1] not in numfmt.SCALES:
        return (authored,), (exact, scale[1])
    return (authored, numfmt.human(exact, scale[1])), (exact, scale[1])


@functools.lru_cache(maxsize=1024)
def _unit_scale(unit: str) -> tuple[Fraction, str] | None:
    """(base units per `unit`, its dimension), or None for a unit kb does not know."""
    from kb.ledger.quantities import QuantityError, unit_scale

    try:
        return unit_scale(unit)
    except (QuantityError, ValueError, ZeroDivisionError):
        return None


def symbol_forms(data: Mapping[str, Any]) -> list[str]:
    """A flop class's symbols as a reader types them: `b_star`, `b*` (from `B^*_seed`), `bw_hbm`.

    The name, lower-cased, and the display form without TeX braces and carets, whole
    and cut at its first subscript (`B^*_N` is also `b*`).
    """
    symbols = data.get("symbols")
    if not isinstance(symbols, Mapping):
        return []
    forms: dict[str, None] = {}
    for name, spec in symbols.items():
        forms[str(name).lower()] = None
        if str(name).endswith("_star"):
            forms[str(name)[: -len("_star")].lower() + "*"] = None
        display = spec.get("display") if isinstance(spec, Mapping) else None
        if isinstance(display, str) and display:
            compact = "".join(c for c in display if c not in "^{} ").lower()
            forms[compact] = None
            forms[compact.split("_", 1)[0]] = None
    return [form for form in forms if form]


# The units a reader may type after a number, each as (factor to base units, dimension);
# checked by kb's own unit parser, so a unit it does not know is never offered.
# kb.quantities' own prefixes, the largest of each (exa, pebi) left out: no figure is that big
_PREFIXES = ("", *list(DECIMAL)[:-1], *list(BINARY)[:-1])
_BASES = ("B", "B/s", "FLOP", "FLOP/s", "W", "J")
_EXTRA = ("s", "ms", "us", "ns", "µs")
_NOT_TYPED = ("B", "kB")  # `70b` and `8b` name models, `kb` the tool: never read as bytes


@functools.lru_cache(maxsize=1)
def search_units() -> dict[str, str]:
    """`{"gb/s": "1000000000 B/s", ...}`: lower-cased unit text -> "factor dimension".

    Strings, not lists: the index file's only brackets stay those of SEARCH_INDEX.
    """
    table: dict[str, str] = {}
    candidates = [p + b for b in _BASES for p in _PREFIXES] + list(_EXTRA)
    for unit in candidates:
        scale = _unit_scale(unit)
        if unit in _NOT_TYPED:
            continue
        if scale is not None and unit.lower() not in table:
            table[unit.lower()] = f"{float(scale[0])!r} {scale[1]}"
    for unit, alias in (("TFLOP/s", "tflops"), ("PFLOP/s", "pflops"), ("GFLOP/s", "gflops")):
        scale = _unit_scale(unit)
        if scale is not None:
            table[alias] = f"{float(scale[0])!r} {scale[1]}"
    return table


def term_texts(node: Any, key: str = "") -> list[str]:
    """Short string leaves outside prose and provenance: `HBM3e`, `nvidia`, `all-reduce`."""
    found: list[str] = []
    _terms_into(found, node, key)
    return found


_NOT_TERMS = frozenset((*SKIPPED, "source", "basis", "note", "locator", "unit", "tier"))


def _terms_into(found: list[str], node: Any, key: str) -> None:
    if key in _NOT_TERMS:
        return
    if isinstance(node, Mapping):
        for child_key, child in node.items():
            _terms_into(found, child, str(child_key))
    elif isinstance(node, list):
        for child in node:
            _terms_into(found, child, "")
    elif isinstance(node, str) and len(node) <= TERM_LIMIT and "/" not in node:
        found.append(node)


def entry_text(record: Record, kb: KnowledgeBase) -> str:
    """One entry as the index writes it (sorted keys, escaped): kept between builds as is."""
    return _escaped(
        json.dumps(search_entry(record, kb), sort_keys=True, ensure_ascii=False, separators=SEP)
    )


def index_script(entries: list[str]) -> str:
    """The index from its entries' texts: the bytes of one `json.dumps` of the whole list."""
    units = json.dumps(search_units(), sort_keys=True, ensure_ascii=False, separators=SEP)
    head = f"window.SEARCH_UNITS = {_escaped(units)};\n"
    return head + f"window.SEARCH_INDEX = [{','.join(entries)}];\n"


SEP = (",", ":")


def _escaped(payload: str) -> str:
    payload = payload.replace("<", "\\u003c").replace("\u2028", "\\u2028")
    return payload.replace("\u2029", "\\u2029")
