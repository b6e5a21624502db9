"""Which strings of a record are prose, and where: (JSON pointer, text) in document order.

Prose fields are the keys in PROSE_KEYS wherever they appear (a quantity's
`note`, a workaround's `text`, a history entry's `change`), and strings in a
list under such a key. Not prose: titles and labels (names), expressions, ids,
and a claim's own `text`, whose numbers EQ027 checks against the claim's computed
value and inputs (kb/rules/eq_claim_text_number_mismatch.py), not PR003; its
templates (`{claim:id}`, `{record-id#field|unit}`) resolve as prose's do
(record_templates).
A history entry's `change` may hold templates, but the prose-number rule skips
it: it records what a figure was at that version, and binding it would rewrite
history whenever the figure changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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


def prose_fields(data: Any) -> Iterator[tuple[str, str]]:
    """(pointer, text) of every prose string in a record's data, in document order."""
    if _ONCE is not None and _ONCE[0] is data:
        if _ONCE[1] is None:
            _ONCE[1] = _walked(data)
        return iter(_ONCE[1])
    return iter(_walked(data))


_ONCE: list[Any] | None = None  # [data, its prose fields or None] inside `walked_once`


@contextmanager
def walked_once(data: Any) -> Iterator[None]:
    """Inside the block, `data`'s prose is walked once for every reader.

    The per-file stage reads it twice (the references and the prose-number rule).
    Only the object `data` itself is remembered, only for the block (the checks
    inside read it and never change it), then forgotten.
    """
    global _ONCE
    outer, _ONCE = _ONCE, [data, None]
    try:
        yield
    finally:
        _ONCE = outer


# Where a node stands with respect to a claim's own `text` (claims/*/text), the one
# place a prose key holds no prose: the walk tracks it as a state, not as a path.
_ROOT, _CLAIMS, _CLAIM, _CLAIM_TEXT, _ELSEWHERE = range(5)


def _below(state: int, key: str) -> int:
    """The state of a child reached by `key` ("*" for a list item) from a node in `state`."""
    if state == _ROOT:
        return _CLAIMS if key == "claims" else _ELSEWHERE
    if state == _CLAIMS:
        return _CLAIM
    if state == _CLAIM and key == "text":
        return _CLAIM_TEXT
    return _ELSEWHERE


def _walked(data: Any) -> list[tuple[str, str]]:
    """The prose strings under `data`, depth first in document order (as `_walk` finds them).

    On the path of every cold run (three stages read prose): a recursive walk that
    tests each value's type once and tracks the claim state only where it can change
    (the root, `claims`, one claim); documents nested deeper than _RECURSION_ROOM
    (records are at most 64 levels) take the iterative `_walk`.
    """
    found: list[tuple[str, str]] = []
    try:
        if type(data) is dict or (type(data) is not list and isinstance(data, Mapping)):
            _in_root(data, found)
        elif isinstance(data, list):
            _in_list(data, "", False, found, _RECURSION_ROOM)  # a list at the root
    except _TooDeep:
        return _walk(data)
    return found


_RECURSION_ROOM = 200


class _TooDeep(Exception):
    """The document nests deeper than the recursive walk goes."""


def _in_root(node: Mapping[Any, Any], found: list[tuple[str, str]]) -> None:
    for key, value in node.items():
        name = str(key)
        prose = name in PROSE_KEYS
        kind = type(value)
        if kind is str or (kind not in _SCALARS and isinstance(value, str)):
            if prose:
                found.append((_child("", name, key), value))
        elif kind is dict or kind is list or _is_container(value):
            at = _child("", name, key)
            if name == "claims":
                _in_claims(value, at, prose, found)
            else:
                _elsewhere(value, at, prose, found, _RECURSION_ROOM)


def _in_claims(node: Any, at: str, prose: bool, found: list[tuple[str, str]]) -> None:
    """`claims` (a list or a mapping): each item is a claim, whose own `text` is not prose."""
    if type(node) is dict or (type(node) is not list and isinstance(node, Mapping)):
        items: Any = ((str(k), k, v, str(k) in PROSE_KEYS) for k, v in node.items())
    else:
        items = (("*", i, v, prose) for i, v in enumerate(node))
    for name, token, value, inner in items:
        kind = type(value)
        if kind is str or (kind not in _SCALARS and isinstance(value, str)):
            if inner:
                found.append((_child(at, name, token), value))
        elif kind is dict or kind is list or _is_container(value):
            _in_claim(value, _child(at, name, token), inner, found)


def _in_claim(node: Any, at: str, prose: bool, found: list[tuple[str, str]]) -> None:
    """One claim: its `text` strings are not prose; everything else is walked as usual."""
    if type(node) is dict or (type(node) is not list and isinstance(node, Mapping)):
        for key, value in node.items():
            name = str(key)
            inner = name in PROSE_KEYS
            kind = type(value)
            if kind is str or (kind not in _SCALARS and isinstance(value, str)):
                if inner and name != "text":
                    found.append((_child(at, name, key), value))
            elif kind is dict or kind is list or _is_container(value):
                # a container under `text` holds prose as any other does: only the claim's
                # own `text` string is not prose
                _elsewhere(value, _child(at, name, key), inner, found, _RECURSION_ROOM)
    else:
        _in_list(node, at, prose, found, _RECURSION_ROOM)


def _elsewhere(node: Any, at: str, prose: bool, found: list[tuple[str, str]], room: int) -> None:
    """A container away from any claim's text: prose is a prose key's strings and its lists'."""
    if room <= 0:
        raise _TooDeep
    if type(node) is dict or (type(node) is not list and isinstance(node, Mapping)):
        for key, value in node.items():
            kind = type(value)
            if kind is str or (kind not in _SCALARS and isinstance(value, str)):
                name = str(key)
                if name in PROSE_KEYS:
                    found.append((_child(at, name, key), value))
            elif kind is dict or kind is list or (kind not in _SCALARS and _is_container(value)):
                name = str(key)
                _elsewhere(value, _child(at, name, key), name in PROSE_KEYS, found, room - 1)
    else:
        _in_list(node, at, prose, found, room)


def _in_list(node: Any, at: str, prose: bool, found: list[tuple[str, str]], room: int) -> None:
    """A list's items: strings are prose when the list is; containers are walked elsewhere."""
    for index, value in enumerate(node):
        kind = type(value)
        if kind is str or (kind not in _SCALARS and isinstance(value, str)):
            if prose:
                found.append((f"{at}/{index}", value))
        elif kind is dict or kind is list or (kind not in _SCALARS and _is_container(value)):
            _elsewhere(value, f"{at}/{index}", prose, found, room - 1)


def _walk(data: Any) -> list[tuple[str, str]]:
    """The prose strings under `data`, depth first in document order.

    One walk per record, on the path of every cold run (three stages read prose): a
    pointer is made only for a container or a prose string, never for other scalars.
    """
    found: list[tuple[str, str]] = []
    stack: list[tuple[Any, str, int, bool]] = [(data, "", _ROOT, False)]
    while stack:
        item, at, state, prose = stack.pop()
        if isinstance(item, str):
            if prose and state != _CLAIM_TEXT:
                found.append((at, item))
            continue
        if type(item) is dict or (type(item) is not list and isinstance(item, Mapping)):
            pairs: Any = ((str(k), k, v, str(k) in PROSE_KEYS) for k, v in item.items())
        elif isinstance(item, list):
            pairs = (("*", i, v, prose) for i, v in enumerate(item))
        else:
            continue
        children = [
            (value, _child(at, key, token), _below(state, key), inner)
            for key, token, value, inner in pairs
            if (inner and isinstance(value, str)) or _is_container(value)
        ]
        stack.extend(reversed(children))
    return found


_SCALARS = frozenset({str, int, float, bool, type(None)})
_PLAIN = frozenset({dict, list})


def _is_container(value: Any) -> bool:
    """isinstance(value, (Mapping, list)), without the slow abstract check for plain types."""
    kind = type(value)
    return kind in _PLAIN or (kind not in _SCALARS and isinstance(value, (Mapping, list)))


def _child(pointer: str, key: str, token: Any) -> str:
    """pointer_join(pointer, token), escaping only a key that needs it (`key`: str(token))."""
    if "~" in key or "/" in key:
        return pointer_join(pointer, token)
    return f"{pointer}/{key}" if key != "*" else f"{pointer}/{token}"


def record_templates(data: Any) -> list[tuple[str, Template]]:
    """(pointer, template) of every template in a record's prose, then its claims' texts."""
    texts = [*prose_fields(data), *claim_texts(data)]
    return [(pointer, t) for pointer, text in texts if "{" in text for t in templates(text)]


def claim_texts(data: Any) -> list[tuple[str, str]]:
    """(pointer, text) of each claim's own `text` string (`claims` a list, as the schema has it)."""
    claims = data.get("claims") if isinstance(data, Mapping) else None
    return [
        (f"/claims/{index}/text", claim["text"])
        for index, claim in enumerate(claims if isinstance(claims, list) else ())
        if isinstance(claim, Mapping) and isinstance(claim.get("text"), str)
    ]


def numbers_checked(pointer: str) -> bool:
    """False for the prose the bare-number rule skips: history entries' `change`."""
    parts = pointer.split("/")[1:]
    return not (len(parts) == 3 and parts[0] == "history" and parts[2] == "change")
