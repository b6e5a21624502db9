"""JSON Schema validation of records; errors become problems at the offending node.

Schemas live in `schemas/` (one per kind, plus shared `defs.schema.json`). Each
schema error is reported at its JSON pointer (the checker maps it to line:col);
a type error that YAML 1.1 caused (`1e9` read as a string, `no` read as false)
gets its own load code, because the fix is in the YAML, not in the value. The
checker runs this once per file, beside its parse (kb.checker.check_file; the
record cache keeps the verdict), and gives each problem its rule module's severity
and hint; its schema stage gathers the verdicts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from kb import settings
from kb.findings import Location, Problem, pointer_join
from kb.model import Record
from kb.resources import ResourceMissing, require_schemas

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

SCHEMA_BASE = "https://kb.invalid/schemas/"
_NUMBER_TEXT = re.compile(r"[-+]?(\d[\d_]*)?\.?\d*([eE][-+]?\d+)?")
_YAML11_BOOLS = {"yes", "no", "on", "off", "y", "n", "true", "false"}


def schema_name(kind: str) -> str:
    return f"{kind}.schema.json"


@lru_cache(maxsize=1)
def load_schemas() -> dict[str, dict[str, Any]]:
    """Every schema file by file name; ResourceMissing when one kb needs is absent or unreadable."""
    from kb.model import KIND_BY_FOLDER

    schemas = {}
    for path in require_schemas(sorted(KIND_BY_FOLDER.values())):
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ResourceMissing(f"schema {path} is unreadable: {exc}") from None
        if not isinstance(schema, dict):
            raise ResourceMissing(f"schema {path} is not a JSON object")
        if "$id" not in schema:
            # `kb schemas export DIR` drops the $id so that $refs resolve file-relative, as
            # they do for an editor; under kb's base they resolve among DIR's files alike
            schema = {**schema, "$id": SCHEMA_BASE + path.name}
        if not isinstance(schema["$id"], str):
            raise ResourceMissing(f"schema {path}: $id is not a string")
        schemas[path.name] = schema
    return schemas


@lru_cache(maxsize=1)
def registry() -> Registry:
    from referencing import Registry, Resource  # only needed when a record is invalid

    resources = [(s["$id"], Resource.from_contents(s)) for s in load_schemas().values()]
    return Registry().with_resources(resources)


@cache
def validator(kind: str) -> Draft202012Validator | None:
    """Build the python-jsonschema validator: every error, with its path, for the messages."""
    from jsonschema import Draft202012Validator

    schema = load_schemas().get(schema_name(kind))
    if schema is None:
        return None
    return Draft202012Validator(schema, registry=registry())


@cache
def fast_validator(kind: str) -> Any | None:
    """Compile a jsonschema-rs validator (~100x faster) for the valid/invalid pass, or None.

    None when jsonschema-rs is not installed, is switched off with
    KB_SCHEMA_ENGINE=python, or cannot compile the schema: python-jsonschema
    then validates every record, with the same findings.
    """
    schema = load_schemas().get(schema_name(kind))
    if schema is None or settings.python_schema_engine():
        return None
    try:
        import jsonschema_rs

        resources = [(s["$id"], s) for s in load_schemas().values()]
        registry = jsonschema_rs.Registry(resources)
        return jsonschema_rs.Draft202012Validator(schema, registry=registry, validate_formats=False)
    except Exception:  # noqa: BLE001 - missing, or a schema it cannot compile: use the fallback
        return None


def _fast_valid(kind: str, data: Any) -> bool:
    """Say True only when the compiled validator accepts the document."""
    fast = fast_validator(kind)
    if fast is None:
        return False
    try:
        return bool(fast.is_valid(data))
    except Exception:  # noqa: BLE001 - e.g. non-string keys: let python-jsonschema report
        return False


MAX_PROBLEMS = 100  # schema problems reported per record; one more finding says there are more


def validate_record(record: Record) -> Iterator[Problem]:
    """Schema problems of one record (SC001, or LD009/LD010 for YAML 1.1 surprises).

    A compiled pass decides valid/invalid; python-jsonschema runs only on the
    invalid records, so every error still gets its path and message.
    """
    if _fast_valid(record.kind, record.data):
        return
    check = validator(record.kind)
    if check is None:
        return
    for count, error in enumerate(check.iter_errors(record.data)):
        if count == MAX_PROBLEMS:  # a record of 100,000 wrong values: bounded work and output
            message = f"more schema problems: only the first {MAX_PROBLEMS} are reported"
            yield Problem("SC001", Location(record.path, 0, 0, ""), message, None)
            return
        yield _finding(record, _most_specific(error))


def _most_specific(error: ValidationError) -> ValidationError:
    """For oneOf/anyOf, descend to the error of the branch that got furthest."""
    while error.context:
        error = max(error.context, key=lambda e: (len(e.absolute_path), -len(e.context or [])))
    return error


def _finding(record: Record, error: ValidationError) -> Problem:
    pointer = pointer_join("", *error.absolute_path)
    code, message, hint = _describe(error)
    if error.validator == "additionalProperties":
        extra = _extra_keys(error)
        if extra:
            pointer = pointer_join(pointer, extra[0])
    return Problem(code, Location(record.path, 0, 0, pointer), message, hint)


def _describe(error: ValidationError) -> tuple[str, str, str | None]:
    """The code, the message and the hint (None: the rule module's HINT) of one error."""
    where = _where(error)
    instance = error.instance
    if instance is None and error.validator in ("type", "enum", "const"):  # `~` or nothing
        wanted = _expected(error.validator_value) if error.validator == "type" else "a value"
        if error.validator == "enum":
            wanted = "one of " + " | ".join(str(v) for v in _values(error.validator_value))
        return (
            "SC001",
            f"{where}placeholder left unfilled (expected {wanted})",
            "replace the ~ with a value (its # TODO comment says what belongs there), or delete"
            " the line if the field is optional",
        )
    if error.validator == "type":
        expected = error.validator_value
        expected_list = expected if isinstance(expected, list) else [expected]
        if isinstance(instance, str) and {"number", "integer"} & set(expected_list):
            if instance and _NUMBER_TEXT.fullmatch(instance.strip()):
                return "LD009", f"{where}{instance!r} was read as a string, expected a number", None
        if isinstance(instance, bool) and "boolean" not in expected_list:
            expected_text = _expected(expected)
            return (
                "LD010",
                f"{where}{_short(instance)} was read as a boolean, expected {expected_text}",
                None,
            )
        return "SC001", f"{where}{_short(instance)} is not of type {_expected(expected)}", ""
    if error.validator in ("enum", "const") and isinstance(instance, bool):
        allowed = error.validator_value
        return (
            "LD010",
            f"{where}{_short(instance)} was read as a boolean, expected one of {_short(allowed)}",
            None,
        )
    if error.validator == "additionalProperties":
        keys = _extra_keys(error)
        extra = ", ".join(repr(k) for k in keys)
        return "SC001", f"{where}unknown field {extra}", _closest_field(error, keys)
    if error.validator == "enum" and isinstance(instance, str):
        from kb.suggest import did_you_mean

        allowed = [str(v) for v in _values(error.validator_value)]
        hint = did_you_mean(instance, allowed, "use one of: " + ", ".join(allowed))
        return "SC001", f"{where}{_shorten(error.message)}", hint
    return "SC001", f"{where}{_shorten(error.message)}", ""


def _closest_field(error: ValidationError, keys: list[str]) -> str | None:
    """`did you mean 'summary'?` for a misspelt field, else None (the rule module's HINT)."""
    from kb.suggest import did_you_mean

    schema = error.schema if isinstance(error.schema, dict) else {}
    known = [k for k in schema.get("properties", {}) if k not in keys]
    return (did_you_mean(keys[0], known) or None) if keys else None


def _values(value: Any) -> list[Any]:
    """An enum's allowed values (the validator's value, typed loosely by jsonschema)."""
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _where(error: ValidationError) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    return f"{path}: " if path else ""


def _expected(value: Any) -> str:
    return " or ".join(value) if isinstance(value, list) else str(value)


def _extra_keys(error: ValidationError) -> list[str]:
    schema = error.schema if isinstance(error.schema, dict) else {}
    allowed = set(schema.get("properties", {}))
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    instance = error.instance if isinstance(error.instance, dict) else {}
    return sorted(
        str(k) for k in instance if k not in allowed and not any(p.search(str(k)) for p in patterns)
    )


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shorten(message: str, limit: int = 240) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."
