"""`kb show ID`: print a record with each reference resolved and each check's state.

YAML output is the record's own text (comments and layout kept) with the
record's verdict on the first line (`# verdict: validated against 1 measurement;
carries 1 erratum`, kb/equations/verdict.py), a comment beside every reference
line (`# -> interconnect: NVLink 4`, or `# -> MISSING`) and beside every checked
equation, derivation step and claim its state (`# recomputed: 3318`, `# erratum:
the source says 3318; kb computes 237`, in red on a terminal); an `erratum:`
link on a scales_with or workaround item gets its claim's line. Closing comment
blocks list what every template in the prose shows, with its provenance
(`# /summary: {hardware/x#memory.bandwidth|TB/s} = 3.35 TB/s (hardware/x
memory.bandwidth; vendor-spec; source: sources/y)`), and the records that
reference this one. JSON output carries the parsed record, its verdict, its
checks, its references, its templates and its referrers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from kb.commands._common import records_root, require_dir, root_option
from kb.equations.results import Item, item_json
from kb.equations.verdict import (
    alarming,
    erratum_links,
    erratum_text,
    has_verdict,
    record_verdict,
    state_text,
    summary_text,
)
from kb.model import KnowledgeBase, Record, Reference, split_binding
from kb.prose.render import as_json, engine_claims, record_shown
from kb.prose.render import describe as describe_template


@click.command()
@click.argument("record_id", metavar="ID")
@root_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["yaml", "json"]),
    default="yaml",
    show_default=True,
    help="yaml: the record's text with references annotated; json: a document.",
)
def show(record_id: str, root: Path | None, fmt: str) -> None:
    """Print record ID with its references resolved (kind and title beside each)."""
    from kb.api import open_kb  # local: loads only when run

    root = records_root(root)
    require_dir(root)
    kb = open_kb(root)
    record = kb.get(record_id.removesuffix(".yaml"))
    if record is None:
        hint = _suggestion(kb, record_id)
        click.echo(f"kb: no record {record_id!r} under {root}{hint}", err=True)
        sys.exit(2)
    if fmt == "json":
        click.echo(json.dumps(as_document(kb, record), indent=2, ensure_ascii=False, default=str))
    else:
        click.echo(annotated_yaml(kb, record), nl=False)


def _suggestion(kb: KnowledgeBase, wanted: str) -> str:
    from kb.suggest import did_you_mean

    return "; " + did_you_mean(wanted.removesuffix(".yaml"), kb.records, "`kb list` shows the ids")


def own_references(kb: KnowledgeBase, record: Record) -> list[Reference]:
    return [ref for ref in kb.references if ref.source_id == record.id]


def describe(kb: KnowledgeBase, ref: Reference) -> dict[str, Any]:
    """Resolve a reference: the target's kind and title, or that it is missing."""
    target_id, field = split_binding(ref.target)
    target = kb.get(target_id)
    entry: dict[str, Any] = {
        "pointer": ref.pointer,
        "target": ref.target,
        "expected_kind": ref.expected_kind,
    }
    if target is None:
        return {**entry, "exists": False}
    entry.update(exists=True, kind=target.kind, title=target.title, version=target.version)
    if field:
        entry["field"] = field
    entry["kind_ok"] = ref.expected_kind in ("*", target.kind)
    return entry


def annotation(entry: dict[str, Any]) -> str:
    if not entry["exists"]:
        return f"{entry['target']} -> MISSING"
    note = f"{entry['target']} -> {entry['kind']}: {entry['title']}"
    if not entry["kind_ok"]:
        note += f" (expected {entry['expected_kind']})"
    return note


def checked_items(kb: KnowledgeBase, record: Record) -> list[Item]:
    """The equations engine's items for `record` (empty when it has nothing checked)."""
    from kb.equations.engine import analyse

    result = analyse(kb).results.get(record.id)
    return list(result.items) if result is not None else []


def annotated_yaml(kb: KnowledgeBase, record: Record) -> str:
    """Return the record's text with its verdict, references and checks annotated."""
    from kb.positions import pointer_positions

    text = Path(record.path).read_text(encoding="utf-8")
    positions = pointer_positions(text)
    notes: dict[int, list[str]] = {}
    templated = record_shown(kb, record, engine_claims(kb))
    from_templates = {(pointer, item.template.target) for pointer, item in templated}
    for ref in own_references(kb, record):
        if (ref.pointer, ref.target) not in from_templates:  # shown with its value below
            line = positions.get(ref.pointer, (0, 0))[0]
            notes.setdefault(line, []).append(annotation(describe(kb, ref)))
    lines = text.splitlines()
    for number, entries in notes.items():
        if 1 <= number <= len(lines):
            # one reference on the line: its id is right there; several: name each
            shown = [e.split(" -> ", 1)[1] for e in entries] if len(entries) == 1 else entries
            lines[number - 1] += "  # -> " + "; ".join(shown)
    items = checked_items(kb, record)
    for number, note, red in _check_notes(record, items, positions):
        if 1 <= number <= len(lines):
            lines[number - 1] += "  " + click.style(f"# {note}", fg="red" if red else None)
    if has_verdict(record.kind, record.data):
        verdict = record_verdict(items, record.data)
        tone = {"contradicted": "red", "erratum": "red", "validated": "green"}.get(verdict.tone)
        lines.insert(0, click.style(f"# verdict: {verdict.text}", fg=tone, bold=True))
    lines += _template_comment(templated)
    lines += _referrer_comment(kb, record)
    return "\n".join(lines) + "\n"


def _template_comment(shown: list[tuple[str, Any]]) -> list[str]:
    """What each template in the record's prose shows (a comment: the YAML stays valid)."""
    if not shown:
        return []
    rows = [f"#   {pointer}: {describe_template(item)}" for pointer, item in shown]
    return ["# templates:", *rows]


def _check_notes(
    record: Record, items: list[Item], positions: dict[str, tuple[int, int]]
) -> list[tuple[int, str, bool]]:
    """(line, note, red) for every checked item and every `erratum:` link of `record`."""
    found = []
    for item in items:
        line = positions.get(item.pointer, positions.get(item.pointer.rsplit("/", 1)[0], (0, 0)))[0]
        found.append((line, summary_text(item), alarming(item)))
    by_claim = {item.id: item for item in items if item.section == "claim"}
    for pointer, claim_id in erratum_links(record.data):
        claim = by_claim.get(claim_id)
        if claim is not None and claim.state == "erratum":
            note = f"erratum {claim_id}: {erratum_text(claim)}"
        else:
            shown = state_text(claim) if claim is not None else "no such claim"
            note = f"erratum {claim_id}: {shown}"
        found.append((positions.get(pointer, (0, 0))[0], note, True))
    return found


def _referrer_comment(kb: KnowledgeBase, record: Record) -> list[str]:
    users = referrers(kb, record)
    if not users:
        return ["# used by: no other record"]
    rows = [f"#   {u['id']} ({u['kind']}) at {u['pointer']}: {u['title']}" for u in users]
    return ["# used by:", *rows]


def referrers(kb: KnowledgeBase, record: Record) -> list[dict[str, Any]]:
    rows = []
    from kb.reads import graph_of

    for ref in _sorted(graph_of(kb).references_to(record.id)):
        if ref.source_id == record.id:
            continue
        source = kb.records[ref.source_id]
        row = {"id": source.id, "kind": source.kind, "title": source.title, "pointer": ref.pointer}
        rows.append(row)
    return rows


def _sorted(refs: Iterable[Reference]) -> list[Reference]:
    return sorted(refs, key=lambda r: (r.source_id, r.pointer))


def as_document(kb: KnowledgeBase, record: Record) -> dict[str, Any]:
    """Return the JSON form: the record, its resolved references, and who references it."""
    items = checked_items(kb, record)
    document: dict[str, Any] = {"id": record.id, "kind": record.kind, "path": record.path}
    if has_verdict(record.kind, record.data):
        document["verdict"] = record_verdict(items, record.data).as_json()
    return {
        **document,
        "record": record.data,
        "checks": [{**item_json(item), "shown": state_text(item)} for item in items],
        "references": [describe(kb, ref) for ref in own_references(kb, record)],
        "templates": [as_json(p, s) for p, s in record_shown(kb, record, engine_claims(kb))],
        "referenced_by": referrers(kb, record),
    }
