"""JSON text indented by two spaces: the bytes `json.dumps(indent=2, ...)` writes, sooner.

With `indent`, Python's json module leaves its C encoder and walks the value with
a generator per level in Python (a record's JSON was ~0.08 ms, 0.8 s of CPU at
10,000 records). `indented` walks it once into a list with the same choices,
test for test (str, None, True, False, int, float, list/tuple, dict, else
`default`), the strings through json's own (C) string encoder and the numbers
through the reprs it uses, so every byte is the same (tests/site/test_json_text.py
holds it to json.dumps on generated values). Anything it was not written for
(a key json refuses, a cycle) is handed to json.dumps, which says what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

INDENT = 2
_FLOAT_REPR = float.__repr__
_INT_REPR = int.__repr__
_INFINITY = float("inf")


class _Refused(Exception):
    """A value json.dumps would refuse or treat its own way: let it speak."""


def indented(value: Any, default: Callable[[Any], Any] = str) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False, default=default)`, byte for byte."""
    out: list[str] = []
    try:
        _value(value, "\n", out, default, 0)
    except (_Refused, RecursionError):
        return json.dumps(value, indent=INDENT, ensure_ascii=False, default=default)
    return "".join(out)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return _FLOAT_REPR(value)


def _value(
    value: Any, newline: str, out: list[str], default: Callable[[Any], Any], depth: int
) -> None:
    """Append `value`'s text; `newline` is the line break and indent of its own level."""
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(_INT_REPR(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, (list, tuple)):
        _list(value, newline, out, default, depth)
    elif isinstance(value, dict):
        _dict(value, newline, out, default, depth)
    else:
        if depth > 50:  # json.dumps tracks what default returned; a chain this long is odd
            raise _Refused
        _value(default(value), newline, out, default, depth + 1)


def _list(
    items: list[Any] | tuple[Any, ...],
    newline: str,
    out: list[str],
    default: Callable[[Any], Any],
    depth: int,
) -> None:
    if not items:
        out.append("[]")
        return
    inner = newline + " " * INDENT
    separator = "[" + inner
    for item in items:
        kind = type(item)
        if kind is str:  # the common leaves inline: a call per leaf was half the time
            out.append(separator + encode_basestring(item))
        elif kind is int:
            out.append(separator + _INT_REPR(item))
        elif kind is dict:
            out.append(separator)
            _dict(item, inner, out, default, depth)
        else:
            out.append(separator)
            _value(item, inner, out, default, depth)
        separator = "," + inner
    out.append(newline + "]")


def _dict(
    mapping: dict[Any, Any], newline: str, out: list[str], default: Callable[[Any], Any], depth: int
) -> None:
    if not mapping:
        out.append("{}")
        return
    inner = newline + " " * INDENT
    separator = "{" + inner
    for key, item in mapping.items():
        head = separator + encode_basestring(key if type(key) is str else _key(key)) + ": "
        kind = type(item)
        if kind is str:  # the common leaves inline, as in _list
            out.append(head + encode_basestring(item))
        elif kind is int:
            out.append(head + _INT_REPR(item))
        elif kind is dict:
            out.append(head)
            _dict(item, inner, out, default, depth)
        elif kind is list:
            out.append(head)
            _list(item, inner, out, default, depth)
        else:
            out.append(head)
            _value(item, inner, out, default, depth)
        separator = "," + inner
    out.append(newline + "}")


def _key(key: Any) -> str:
    """A key as json.dumps writes it (before quoting); a key it refuses goes to it."""
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return _INT_REPR(key)
    raise _Refused
