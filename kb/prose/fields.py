"""Which strings of a record are prose, and where: (JSON pointer, text) in document order.

Prose fields are the keys in PROSE_KEYS wherever they appear (a quantity's
`note`, a workaround's `text`, a history entry's `change`), and strings in a
list under such a key. Not prose: titles and labels (names), expressions, ids,
and a claim's own `text` (its number is the claim, checked through `expect`).
A history entry's `change` may hold templates, but the prose-number rule skips
it: it records what a figure was at that version, and binding it would rewrite
history whenever the figure changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kb.findings import pointer_join
from kb.prose.scan import Template, templates

PROSE_KEYS = frozenset(
    {
        "summary",
        "text",
        "notes",
        "note",
        "change",
        "meaning",
        "effect",
        "magnitude",
        "entry",
        "reason",
        "description",
    }
)
_CLAIM_TEXT = ("claims", "*", "text")
_HISTORY_CHANGE = ("history", "*", "change")


def prose_fields(data: Any) -> Iterator[tuple[str, str]]:
    """(pointer, text) of every prose string in a record's data, in document order."""
    yield from _walk(data, "", ())


def _walk(node: Any, pointer: str, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    stack: list[tuple[Any, str, tuple[str, ...], bool]] = [(node, pointer, path, False)]
    while stack:
        item, at, where, prose = stack.pop()
        if isinstance(item, str):
            if prose and not _matches(where, _CLAIM_TEXT):
                yield at, item
        elif isinstance(item, Mapping):
            children = [
                (v, pointer_join(at, k), (*where, str(k)), str(k) in PROSE_KEYS)
                for k, v in item.items()
            ]
            stack.extend(reversed(children))
        elif isinstance(item, list):
            children = [(v, pointer_join(at, i), (*where, "*"), prose) for i, v in enumerate(item)]
            stack.extend(reversed(children))


def record_templates(data: Any) -> list[tuple[str, Template]]:
    """(pointer, template) of every template in a record's prose, in document order."""
    return [
        (pointer, t) for pointer, text in prose_fields(data) if "{" in text for t in templates(text)
    ]


def numbers_checked(pointer: str) -> bool:
    """False for the prose the bare-number rule skips: history entries' `change`."""
    parts = pointer.split("/")[1:]
    return not (len(parts) == 3 and parts[0] == "history" and parts[2] == "change")


def _matches(path: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    if len(path) != len(pattern):
        return False
    return all(p in ("*", q) for q, p in zip(path, pattern, strict=True))
