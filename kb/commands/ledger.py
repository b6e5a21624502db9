"""`kb ledger PLACEMENT_ID`: feasibility first, then each ledger, the comparison, the break-even.

Exit status: 0 when the ledger was computed, 1 when the placement has findings (schema
errors or incomplete inputs, LG004), 2 for a usage error (unknown id, bad `--set`).
A placement that fails its schema is not computed: its schema-stage findings (SC001,
LD009, LD010) are printed, located, and stderr says the ledger was not computed
(kb.ledger.inputs).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kb.commands._common import records_root, require_dir, root_option
from kb.findings import Finding
from kb.ledger.inputs import Unresolved
from kb.model import KnowledgeBase, Record


def _settings(pairs: tuple[str, ...]) -> dict[str, str]:
    settings = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise click.UsageError(f"--set {pair!r}: expected NAME=VALUE, e.g. batch=8")
        settings[name.strip()] = value.strip()
    return settings


@click.command()
@click.argument("placement_id")
@root_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format (json carries exact fractions).",
)
@click.option(
    "--set",
    "pairs",
    multiple=True,
    metavar="NAME=VALUE",
    help="Vary an envelope input (batch, state_bytes, useful_work, slo; context of a "
    "composed placement) without editing the record, e.g. --set batch=8 "
    "--set state_bytes=150GB --set context=8192.",
)
def ledger(placement_id: str, root: Path | None, fmt: str, pairs: tuple[str, ...]) -> None:
    """Print the placement-tax ledger of PLACEMENT_ID.

    Feasibility first, then each option's ledger, the comparison and the break-even;
    for example `kb ledger placements/coherent-host-vs-two-hosts-8b`.
    """
    from kb.api import open_kb, validate
    from kb.ledger.analysis import analyze_placement
    from kb.ledger.inputs import Unresolved
    from kb.ledger.render import text, to_json
    from kb.report import render

    settings = _settings(pairs)
    root = records_root(root)
    require_dir(root)
    kb = open_kb(root, checked=validate(root))
    record = kb.get(placement_id)
    if record is None or record.kind != "placement":
        raise click.UsageError(_not_a_placement(kb, placement_id, root))
    findings = _schema_errors(kb, record)
    try:
        result = None if findings else analyze_placement(record, kb, settings, True)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if isinstance(result, Unresolved):
        findings = _gaps(result)
    if findings or result is None or isinstance(result, Unresolved):
        click.echo(render("json" if fmt == "json" else "text", findings, 1), nl=False)
        if result is None:
            click.echo(
                f"kb ledger: {placement_id} fails its schema; the ledger is not computed from it",
                err=True,
            )
        sys.exit(1)
    click.echo(to_json(result) if fmt == "json" else text(result), nl=False)


def _schema_errors(kb: KnowledgeBase, record: Record) -> list[Finding]:
    """The placement's schema-stage findings: the verdict of the `kb validate` run it opened."""
    from kb.checker import resolve_locations
    from kb.kinds import views

    return sorted(resolve_locations(views(kb).findings(record)), key=Finding.sort_key)


def _gaps(result: Unresolved) -> list[Finding]:
    """What this run's ledger lacks (with --set, the varied inputs' gaps), located."""
    from kb.checker import resolve_locations
    from kb.rules.ledger_inputs_incomplete import gap_findings

    return resolve_locations(gap_findings(result))


def _not_a_placement(kb: KnowledgeBase, wanted: str, root: Path) -> str:
    """The usage message for an id that names no placement, with the closest placement id."""
    from kb.suggest import did_you_mean

    placements = [r.id for r in kb if r.kind == "placement"]
    listed = "`kb list --kind placement` lists them"
    hint = did_you_mean(wanted.removesuffix(".yaml"), placements, listed)
    found = kb.get(wanted)
    if found is None:
        return f"no record {wanted!r} under {root}; {hint}"
    article = "an" if found.kind[0] in "aeiou" else "a"
    return f"{wanted!r} is {article} {found.kind} record, not a placement; {hint}"
