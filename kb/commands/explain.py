"""`kb rules` lists the catalogue; `kb explain CODE` prints a rule's documentation."""

from __future__ import annotations

import sys

import click

from kb.rules import all_rules, by_code, summary


@click.command()
@click.argument("code")
def explain(code: str) -> None:
    """Print the documentation of rule CODE (for example RF001)."""
    rule = by_code(code)
    if rule is None:
        from kb.commands._codes import registered_codes, suggestion

        close = suggestion(code.strip().upper(), registered_codes())
        hint = f"did you mean {close}? " if close and len(close) > 2 else ""
        click.echo(f"kb: no rule {code!r}; {hint}`kb rules` lists them", err=True)
        sys.exit(2)
    click.echo(f"{rule.CODE} {rule.NAME} ({rule.SEVERITY.value})\n")
    click.echo((rule.__doc__ or "").strip())


@click.command()
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def rules(fmt: str) -> None:
    """List every rule: code, name, severity and the requirement it checks.

    `--format json`: a list of {code, name, severity, summary, hint}, described by
    the schema shipped as kb/data/output/rules.v1.schema.json.
    """
    catalogue = all_rules()
    if fmt == "json":
        import json

        rows = [
            {
                "code": r.CODE,
                "name": r.NAME,
                "severity": r.SEVERITY.value,
                "summary": summary(r),
                "hint": r.HINT,
            }
            for r in catalogue
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    for rule in catalogue:
        click.echo(f"{rule.CODE}  {rule.NAME:<40} {rule.SEVERITY.value:<8} {summary(rule)}")
