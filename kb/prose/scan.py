"""Split free text into templates, quotations, code spans and number tokens. Pure, no I/O.

What the prose-number rule (PR003) flags is decided here, and documented in
docs/record-format.md ("Numbers in prose"):

* protected, never flagged: a template `{...}` (one that names a figure with
  `#` or a claim with `claim:`; `{#field}` and `{claim:id}` are the record's
  own), a quotation between straight `"` or curly `“ ”` double quotation
  marks, a code span between backticks, a URL;
* a *word* is a run of characters between spaces and the separators
  ``( ) [ ] { } < > ; , = ~ ≈ × ' " “ ” ` `` (a comma between two digits, as
  in 1,979, does not separate); sentence punctuation at its ends is dropped;
* a word is a figure when it is a number (`3.35`, `1,979`, `1.0e+9`), a number
  with `%` or `x` (`89%`, `1.44x`), a number glued to a unit kb knows
  (`80GB`, `3.35TBps`, `37us`; not `B`: `70B` names a model size) or to
  `k`/`K`/`M` (`128K`), or digits joined only by `- – / : .` (`3-5`, `2:4`);
* not figures: a word with letters or `* ^ _` in it besides such a unit (`H100`,
  `TP8`, `Llama-2-7B`, `8x22B`, `v5e`, `bf16`, `x16`, `2*L`, `N-1`), an ISO date,
  a version with two or more dots (`2.18.3`), a word starting with `#` or `§`
  (`#4567`, `§3.1`), and a plain number right after a naming word (NAME_WORDS:
  `Llama 3.1`, `NVLink 4`, `PCIe 5.0`, `seed 003`, `issue 12`, `PR 4567`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from kb.model import is_valid_id
from kb.quantities import UnitError, parse_unit

_TEMPLATE = re.compile(r"\{([^{}\n]{1,300})\}")
_REF = re.compile(
    r"(?:(?P<rid>[a-z0-9][a-z0-9._-]*(?:/[a-z0-9][a-z0-9._-]*)+)?(?P<hash>#))?"
    r"(?:claim:(?P<claim>[A-Za-z0-9][A-Za-z0-9._-]*)"
    r"|(?P<field>[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*))"
    r"(?:\|(?P<unit>[^{}|]*))?"
)
_QUOTE = re.compile(r'"[^"]*"|“[^”]*”')
_CODE = re.compile(r"`[^`]*`")
_URL = re.compile(r"(?:https?://|www\.)\S+")
_SEPARATORS = r"\s()\[\]{}<>;=~≈×'\"“”‘’`,"
_WORD = re.compile(rf"(?:[^{_SEPARATORS}]|(?<=\d),(?=\d{{3}}))+")
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_LEAD = "-–—+±−"
_TRAIL = ".:!?-–—"
_PLAIN = re.compile(rf"(?P<n>{_NUM})(?:%|x|×)?")
_GLUED = re.compile(rf"(?P<n>{_NUM})(?P<u>[A-Za-zµ][A-Za-z0-9µ/^*]*)")
_NO_LETTERS = re.compile(r"[\d.,:/%–-]+")
_NUMBERS = re.compile(_NUM)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?")
_VERSION = re.compile(r"v?\d+(?:\.\d+){2,}")
COUNT_SUFFIXES = frozenset({"k", "K", "M"})
NAME_WORDS = frozenset(
    {
        "llama",
        "nvlink",
        "pcie",
        "cuda",
        "nccl",
        "rccl",
        "mlperf",
        "gen",
        "seed",
        "issue",
        "pr",
        "section",
        "table",
        "figure",
        "fig",
        "step",
        "item",
        "version",
        "chapter",
        "appendix",
        "equation",
        "eq",
        "page",
        "python",
        "sympy",
        "ubuntu",
        "gemma",
        "qwen",
        "gemini",
        "claude",
        "gaudi",
        "trainium",
        "zen",
        "ieee",
        "hbm",
        "ddr",
        "rule",
        "phase",
        "cdna",
    }
)


@dataclass(frozen=True)
class Template:
    """`{record#field|unit}`, `{#field}`, `{claim:id|unit}`, `{record#claim:id}`: [start, end)."""

    start: int
    end: int
    raw: str
    record_id: str = ""  # "" = the record the text belongs to
    field: str = ""  # dotted path of a figure ("" for a claim)
    claim: str = ""  # claim id ("" for a figure)
    unit: str = ""  # "" = as authored
    error: str = ""  # why it is malformed ("" if it is well formed)

    @property
    def target(self) -> str:
        """The reference it makes (`id#field`, `id#claim:x`), "" for the record's own claim."""
        if self.error or not self.record_id:
            return ""
        return f"{self.record_id}#{self.field or 'claim:' + self.claim}"


@dataclass(frozen=True)
class Number:
    """A number token that is a figure, at [start, end) of the text."""

    start: int
    end: int
    text: str


def templates(text: str) -> list[Template]:
    """Every template in `text` (well formed or not: `error` says)."""
    found = []
    for match in _TEMPLATE.finditer(text):
        inner = match.group(1)
        if "#" not in inner and not inner.startswith("claim:"):
            continue  # braces around ordinary text
        found.append(_template(match.start(), match.end(), inner))
    return found


def _template(start: int, end: int, inner: str) -> Template:
    raw = "{" + inner + "}"
    ref = _REF.fullmatch(inner)
    if ref is None:
        return Template(
            start,
            end,
            raw,
            error="write {record-id#dotted.field}, "
            "{record-id#dotted.field|unit}, {claim:id} or {record-id#claim:id}",
        )
    rid, claim, field, unit = ref.group("rid", "claim", "field", "unit")
    if field and not ref.group("hash"):
        return Template(
            start,
            end,
            raw,
            error="a figure template is {record-id#field}, or "
            "{#field} for a field of the record itself",
        )
    if rid and not is_valid_id(rid):
        return Template(start, end, raw, error=f"{rid!r} is not a record id")
    unit = (unit or "").strip()
    if ref.group("unit") is not None and not unit:
        return Template(start, end, raw, error="the unit after '|' is empty")
    return Template(start, end, raw, rid or "", field or "", claim or "", unit)


def protected(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every template, quotation, code span and URL in `text`."""
    spans = [(t.start, t.end, "template") for t in templates(text)]
    for kind, pattern in (("quote", _QUOTE), ("code", _CODE), ("url", _URL)):
        spans += [(m.start(), m.end(), kind) for m in pattern.finditer(text)]
    return sorted(spans)


def bare_numbers(text: str) -> list[Number]:
    """The figures written as plain numbers: outside every template, quotation, code, URL."""
    return list(_bare_numbers(text))


@lru_cache(maxsize=8192)
def _bare_numbers(text: str) -> tuple[Number, ...]:
    """bare_numbers, kept by text: `kb lsp` scans a record's unchanged prose on every edit."""
    return tuple(_scan_numbers(text))


def _scan_numbers(text: str) -> list[Number]:
    spans = protected(text)
    found: list[Number] = []
    previous = ""
    for match in _WORD.finditer(text):
        word, start = _strip(match.group(), match.start())
        # a word without a digit is never a figure (_figures' first test): asked first,
        # it spares the span search for most words
        if _has_digit(word) and not _inside(start, spans):
            found += _figures(word, start, previous)
        previous = word.lower().rstrip(".")
    return found


def _strip(word: str, start: int) -> tuple[str, int]:
    stripped = word.lstrip(_LEAD)
    start += len(word) - len(stripped)
    return stripped.rstrip(_TRAIL), start


def _has_digit(word: str) -> bool:
    # most words are letters alone: `isalpha` (one C call) answers for them, as no character
    # is both a letter and a digit (tests/prose/test_scan.py holds that for all of Unicode)
    return not word.isalpha() and any(c.isdigit() for c in word)


def _inside(position: int, spans: list[tuple[int, int, str]]) -> bool:
    return any(lo <= position < hi for lo, hi, _ in spans)


def _figures(word: str, start: int, previous: str) -> list[Number]:
    if not _has_digit(word) or word[0] in "#§":
        return []
    if _DATE.fullmatch(word) or _VERSION.fullmatch(word):
        return []
    plain = _PLAIN.fullmatch(word)
    if plain:
        if previous in NAME_WORDS:
            return []
        return [Number(start, start + plain.end("n"), plain.group("n"))]
    glued = _GLUED.fullmatch(word)
    if glued:
        if _is_unit(glued.group("u")):
            return [Number(start, start + glued.end("n"), glued.group("n"))]
        return []
    if _NO_LETTERS.fullmatch(word):
        return [
            Number(start + m.start(), start + m.end(), m.group()) for m in _NUMBERS.finditer(word)
        ]
    return []


@lru_cache(maxsize=1024)
def _is_unit(suffix: str) -> bool:
    """True when a suffix glued to a number is a unit (kb's own table) or a count (k, M)."""
    if suffix in COUNT_SUFFIXES:
        return True
    if suffix == "B":
        return False  # 70B, 8B: a model's size in parameters, not bytes
    try:
        parse_unit(suffix)
    except UnitError as exc:
        return "ambiguous" in str(exc)  # 3.35TBps: a unit kb refuses, still a figure
    return True
