"""The JSON Schemas: draft 2020-12, stable `$id`s, resolvable `$ref`s, known `x-kb-ref` kinds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kb.model import KINDS
from kb.schema import SCHEMA_BASE, registry, validator
from tests.conftest import REPO

SCHEMAS = sorted((REPO / "kb" / "schemas").glob("*.schema.json"))
METASCHEMA = "https://json-schema.org/draft/2020-12/schema"


def walk(node: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair of a JSON document."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, v
            yield from walk(v, k)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item, key)


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_schema_is_valid_against_the_2020_12_metaschema(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema.get("$schema") == METASCHEMA
    Draft202012Validator.check_schema(schema)  # raises SchemaError with the path on failure


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_schema_id_is_stable_and_matches_its_file_name(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$id"] == SCHEMA_BASE + path.name


def test_every_kind_has_a_schema() -> None:
    names = {p.name for p in SCHEMAS}
    for kind in KINDS:
        assert f"{kind}.schema.json" in names
        assert validator(kind) is not None


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_ref_resolves(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    resolver = registry().resolver(base_uri=schema["$id"])
    refs = [value for key, value in walk(schema) if key == "$ref" and isinstance(value, str)]
    for ref in refs:
        resolver.lookup(ref)  # raises Unresolvable on a broken $ref


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_x_kb_ref_names_a_kind(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    targets = [value for key, value in walk(schema) if key == "x-kb-ref"]
    assert all(t == "*" or t in KINDS for t in targets), targets


def test_kind_schemas_pin_their_kind() -> None:
    for kind in KINDS:
        path = REPO / "kb" / "schemas" / f"{kind}.schema.json"
        schema = json.loads(path.read_text(encoding="utf-8"))
        assert schema["properties"]["kind"] == {**schema["properties"]["kind"], "const": kind}
        assert {"kind", "id", "title", "version", "status", "history"} <= set(schema["required"])


def test_metaschema_check_rejects_a_broken_schema() -> None:
    from jsonschema.exceptions import SchemaError

    with pytest.raises(SchemaError):
        Draft202012Validator.check_schema({"$schema": METASCHEMA, "type": "text"})


@pytest.mark.parametrize("bad", [1, 0, -72, "72", 72.5, True])
def test_interconnect_domain_size_is_a_count_of_at_least_two(bad: Any) -> None:
    import yaml

    path = REPO / "records" / "interconnects" / "nvlink-5-nvl72.yaml"
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    check = validator("interconnect")
    assert record["domain_size"] == 72
    assert not list(check.iter_errors(record)), "the shipped NVL72 domain record must validate"
    broken = {**record, "domain_size": bad}
    errors = list(check.iter_errors(broken))
    assert errors and all(list(e.path) == ["domain_size"] for e in errors)
