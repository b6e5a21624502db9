"""`kb new KIND ID`: write a skeleton record that names its schema and flags what is left to fill.

The skeleton is generated from the kind's JSON Schema, so it follows the
schema as it grows: the common fields, then every required field of the kind
(recursively; one item for a required list). Each value the author must supply
is a placeholder `~` (null) with a `# TODO:` comment that says what belongs
there. A null never satisfies the schema, so `kb validate` reports every
placeholder left as SC001 at its line ("placeholder left unfilled"), and kb never
writes a number the author did not give. A flop class also gets a commented worked
example of its maths (kb/commands/_examples.py): symbols, equations, a derivation, a
numeric claim bound to another record and to literals, a scaling claim and a
prediction against a receipt.
"""

from __future__ import annotations

import datetime
import os
import sys
from pathlib import Path
from typing import Any

import click

from kb.commands._common import KIND, records_root, require_dir, root_option
from kb.model import FOLDER_BY_KIND, QUANTITY_BASES, is_valid_id

COMMON_FIELDS = ("kind", "id", "title", "version", "status", "history")
QUANTITY_REF = "#/$defs/quantity"
MAX_DEPTH = 8
QUANTITY_HINTS = {
    "value": "a number as the source states it (write 1.0e+9, never 1e9)",
    "unit": "GB, GB/s, TFLOP/s, W, s, 1, ... (see docs/record-format.md)",
    "basis": " | ".join(QUANTITY_BASES),
    "source": "sources/<id> (delete this line if basis is assumed or unverified)",
}


@click.command()
@click.argument("kind", metavar="KIND", type=KIND)
@click.argument("record_id", metavar="ID")
@root_option
def new(kind: str, record_id: str, root: Path | None) -> None:
    """Write records/ID.yaml, a skeleton of KIND; never overwrites an existing file.

    Fill the `# TODO:` placeholders, then run `kb validate`: every placeholder
    left is reported at its line.
    """
    root = records_root(root)
    require_dir(root)
    record_id = record_id.removesuffix(".yaml")  # a path typed by habit
    _check_id(kind, record_id)
    path = root / f"{record_id}.yaml"
    text = skeleton(kind, record_id, schema_modeline(root, path, kind))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file where the folder should be, no permission: the user's to fix
        raise click.UsageError(f"cannot create {path.parent}: {exc.strerror or exc}") from None
    try:
        with path.open("x", encoding="utf-8") as handle:  # "x": fails if it exists, even in a race
            handle.write(text)
    except FileExistsError:
        click.echo(f"kb: {path} already exists; kb new never overwrites a record", err=True)
        sys.exit(2)
    except OSError as exc:
        raise click.UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    todo = text.count("# TODO:")
    click.echo(f"wrote {path}: fill its {todo} TODO placeholders, then run `kb validate {path}`")


def _check_id(kind: str, record_id: str) -> None:
    folder = FOLDER_BY_KIND[kind]
    if not is_valid_id(record_id):
        raise click.UsageError(
            f"{record_id!r} is not a record id: lowercase segments [a-z0-9][a-z0-9._-]*"
            f" joined by '/', for example {folder}/my-record"
        )
    if record_id.split("/")[0] != folder:
        example = f"{folder}/{record_id.split('/')[-1]}"
        raise click.UsageError(f"a {kind} record lives under {folder}/: use {example}")


def schema_modeline(root: Path, path: Path, kind: str) -> str:
    """Return the yaml-language-server modeline: the schema path relative to the record.

    The schema is the records repository's own copy (`schemas/` beside `records/`,
    written by `kb schemas export schemas`) when there is one, else kb's.
    """
    from kb.resources import schemas_dir

    name = f"{kind}.schema.json"
    own = root.resolve().parent / "schemas" / name
    schema = own if own.is_file() else schemas_dir().resolve() / name
    relative = os.path.relpath(schema, path.parent.resolve())
    return f"# yaml-language-server: $schema={Path(relative).as_posix()}"


def skeleton(kind: str, record_id: str, modeline: str) -> str:
    """Return the skeleton's text: modeline, common fields, then the kind's required fields."""
    from kb.schema import load_schemas, schema_name  # local: jsonschema only when writing

    schema = load_schemas()[schema_name(kind)]
    today = datetime.date.today().isoformat()
    lines = [
        modeline,
        f"kind: {kind}",
        f"id: {record_id}",
        "title: ~  # TODO: a short title",
        "version: 1",
        "status: draft",
        "history:",
        "  - version: 1",
        f'    date: "{today}"',
        "    change: ~  # TODO: what this version encodes, and from which sources",
    ]
    for name in schema.get("required", []):
        if name not in COMMON_FIELDS:
            lines += field_lines(name, schema["properties"][name], schema, 0)
    from kb.commands._examples import EXAMPLES

    example = EXAMPLES.get(kind)
    return "\n".join(lines) + "\n" + (example or "")


def field_lines(name: str, node: dict[str, Any], doc: dict[str, Any], indent: int) -> list[str]:
    """Return the skeleton lines of one field (and of its required children)."""
    node, doc, is_quantity = _resolve(node, doc)
    pad = " " * indent
    if is_quantity:
        placeholders = [f"{pad}  {k}: ~  # TODO: {hint}" for k, hint in QUANTITY_HINTS.items()]
        return [f"{pad}{name}:", *placeholders]
    children = _required_children(node, doc, indent + 2)
    if children is not None:
        return [f"{pad}{name}:", *children]
    items = _required_item(node, doc, indent + 2)
    if items is not None:
        return [f"{pad}{name}:", *items]
    return [f"{pad}{name}: ~  # TODO: {_hint(node)}"]


def _resolve(
    node: dict[str, Any], doc: dict[str, Any], depth: int = 0
) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """Follow $ref (and the first branch of oneOf/anyOf without a type) to the node to fill."""
    from kb.schema import load_schemas

    while depth < MAX_DEPTH:
        depth += 1
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref.endswith(QUANTITY_REF):
                return node, doc, True
            file_part, _, fragment = ref.partition("#")
            target_doc = load_schemas().get(file_part.rsplit("/", 1)[-1], doc) if file_part else doc
            target: Any = target_doc
            for part in [p for p in fragment.split("/") if p]:
                target = target.get(part, {}) if isinstance(target, dict) else {}
            extra = {k: v for k, v in node.items() if k != "$ref"}
            node, doc = {**target, **extra}, target_doc
            continue
        branches = node.get("oneOf") or node.get("anyOf")
        if branches and "type" not in node and "properties" not in node:
            node = {**branches[0], **{k: v for k, v in node.items() if k not in ("oneOf", "anyOf")}}
            continue
        break
    return node, doc, False


def _required_children(node: dict[str, Any], doc: dict[str, Any], indent: int) -> list[str] | None:
    """Lines for the fields an object must have (or, for a block of text fields, all of them)."""
    properties = node.get("properties", {})
    required = [r for r in _required_names(node) if r in properties]
    if not required and properties and all(p.get("type") == "string" for p in properties.values()):
        # e.g. a receipt's provenance: every field is expected; the block's description says how
        note = str(node.get("description", "")).strip()
        return [f"{' ' * indent}{name}: ~  # TODO: {note or 'text'}" for name in properties]
    if not required or indent > 2 * MAX_DEPTH:
        return None
    lines: list[str] = []
    for child in required:
        lines += field_lines(child, node["properties"][child], doc, indent)
    return lines


def _required_names(node: dict[str, Any]) -> list[str]:
    """List `required`, plus the first alternative of an anyOf/oneOf of required lists."""
    names = list(node.get("required", []))
    for key in ("anyOf", "oneOf"):
        branches = node.get(key) or []
        if branches and all(set(b) == {"required"} for b in branches):
            names += [n for n in branches[0]["required"] if n not in names]
    return names


def _required_item(node: dict[str, Any], doc: dict[str, Any], indent: int) -> list[str] | None:
    """One list item, when the list must not be empty."""
    if node.get("type") != "array" or not node.get("minItems"):
        return None
    if not isinstance(node.get("items"), dict):
        return None
    item, item_doc, is_quantity = _resolve(node["items"], doc)
    lines = None if is_quantity else _required_children(item, item_doc, indent + 2)
    if not lines:
        return [f"{' ' * indent}- ~  # TODO: {_hint(item)}"]
    first = lines[0]
    return [f"{' ' * indent}- {first.lstrip()}", *lines[1:]]


def _hint(node: dict[str, Any]) -> str:
    """Say what belongs in a placeholder: allowed values, referenced kind, or description."""
    if "enum" in node:
        return " | ".join(str(v) for v in node["enum"])
    kind = node.get("x-kb-ref")
    if isinstance(kind, str):
        return "the id of any record" if kind == "*" else f"the id of {_article(kind)} record"
    description = str(node.get("description", "")).strip().splitlines()
    if description:
        return description[0]
    properties = list(node.get("properties", {}))
    if properties:
        return f"a mapping with any of: {', '.join(properties)}"
    return _article(str(node.get("type", "value")))


def _article(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"
