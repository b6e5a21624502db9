"""What a parsed YAML value is called in kb's messages: `null`, `a list`, never `NoneType`."""

from __future__ import annotations

from collections.abc import Mapping


def yaml_kind(value: object) -> str:
    """The YAML word for `value`'s type, with its article ("a list", "null", "a number")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return "a value of another type"
