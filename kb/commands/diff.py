"""`kb diff BASE [HEAD]`: what a change does to the knowledge, for a reviewer.

Text for a terminal, `--format markdown` for a pull-request comment, `--format json`
for tools. The comparison itself is kb.knowledge_diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from kb.commands._common import records_root, require_dir, root_option


@click.command()
@click.argument("base", metavar="BASE")
@click.argument("head", metavar="[HEAD]", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="Output format (markdown: for a pull-request comment).",
)
@root_option
def diff(base: str, head: str | None, fmt: str, root: Path | None) -> None:
    """Compare the knowledge at git revision BASE with HEAD (default: the working tree).

    Lists records added, removed and changed, figures changed (old -> new, with
    unit, basis and source), every claim whose computed value or state moved (in
    any record: a hardware figure moves the claims that bind it), predictions that
    left or entered their band, errata that stopped holding, and findings
    introduced or fixed. Exit status 0 (a diff is no failure), 2 on a bad revision.
    """
    from kb.knowledge_diff import diff_revisions

    root = records_root(root)
    require_dir(root)
    from kb.usage import UsageProblem

    try:
        found = diff_revisions(root, base, head)
    except UsageProblem as exc:  # a revision git does not know, no repository: exit 2
        raise click.UsageError(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps(found.as_json(), indent=2, sort_keys=True))
    else:
        click.echo(render(found.as_json(), markdown=fmt == "markdown"), nl=False)


def render(data: dict[str, Any], markdown: bool = False) -> str:
    """The diff as text (or markdown): one section per kind of change, empty ones left out."""
    head = "### " if markdown else ""
    bullet = "- " if markdown else "  "
    code = "`" if markdown else ""
    lines = [f"{head}kb diff {data['base']} -> {data['head']}", ""]

    def section(title: str, rows: list[str]) -> None:
        if rows:
            lines.append(f"{head}{title} ({len(rows)})" + ("" if markdown else ":"))
            lines.extend(f"{bullet}{row}" for row in rows)
            lines.append("")

    section("Records added", [f"{code}{r}{code}" for r in data["added"]])
    section("Records removed", [f"{code}{r}{code}" for r in data["removed"]])
    section("Records changed", [f"{code}{r}{code}" for r in data["changed"]])
    section("Figures changed", [_figure(row, code) for row in data["figures"]])
    section("Claims and checks that moved", [_moved(row, code) for row in data["moved"]])
    section("Findings introduced", [_finding(f, code) for f in data["findings_added"]])
    section("Findings fixed", [_finding(f, code) for f in data["findings_fixed"]])
    if len(lines) == 2:
        lines.append("No change to the knowledge.")
        lines.append("")
    return "\n".join(lines)


def _quantity(value: dict[str, Any] | None) -> str:
    if value is None:
        return "(none)"
    extra = ", ".join(f"{k} {value[k]}" for k in ("basis", "source") if k in value)
    return f"{value.get('value')} {value.get('unit')}" + (f" ({extra})" if extra else "")


def _figure(row: dict[str, Any], code: str) -> str:
    where = f"{code}{row['record']}#{row['field']}{code}"
    return f"{where}: {_quantity(row['old'])} -> {_quantity(row['new'])}"


def _state(item: dict[str, str] | None) -> str:
    if item is None:
        return "(none)"
    value = item["computed"].split(" (exact")[0]
    unit = item.get("unit") or ""
    has_unit = " " in value or unit == "1"  # `3350 GB/s`, `factor 0.5`; counts need none
    shown = value if has_unit or not value else f"{value} {unit}"
    if item.get("error"):
        shown += f" (error {item['error']}, band {item['band']})"
    return f"{shown} {item['state']}".strip() if shown else item["state"]


def _moved(row: dict[str, Any], code: str) -> str:
    where = f"{code}{row['record']}{code} {row['section']} {code}{row['id']}{code}"
    label = "" if " -> " in row["what"] or row["what"] == "value moved" else f" [{row['what']}]"
    return f"{where}: {_state(row['old'])} -> {_state(row['new'])}{label}"


def _finding(row: dict[str, str], code: str) -> str:
    return f"{code}{row['path']}{code} {row['code']} {row['message']}"
