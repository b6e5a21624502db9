"""`kb calc RECORD_ID [EQUATION_OR_SYMBOL] --set NAME=VALUE ...`: evaluate a record's equation.

Each --set binds a symbol to a quantity (`--set BW_link="63 GB/s"`) or to another
record's field (`--set BW_hbm=hardware/nvidia-h200-sxm#memory.bandwidth`);
unset symbols take the bindings of the record's numeric claims. Prints the
substitution trail with units and the result. Exit 0 on success, 2 on bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kb.commands._common import records_root, require_dir, root_option


def _settings(pairs: tuple[str, ...]) -> dict[str, str]:
    settings: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise click.UsageError(f"--set {pair!r}: expected NAME=VALUE, e.g. BW_link='63 GB/s'")
        settings[name.strip()] = value.strip()
    return settings


@click.command()
@click.argument("record_id")
@click.argument("target", required=False)
@root_option
@click.option("--set", "pairs", multiple=True, metavar="NAME=VALUE",
              help="Bind a symbol: a quantity ('63 GB/s') or record-id#dotted.field.")
def calc(record_id: str, target: str | None, root: Path | None, pairs: tuple[str, ...]) -> None:
    """Evaluate TARGET (an equation id or symbol) of RECORD_ID and show the trail."""
    from kb.equations.evaluate import EvaluationError, binding_spec, evaluate
    from kb.loader import load_knowledge_base

    folder = records_root(root)
    require_dir(folder)
    settings = _settings(pairs)
    kb, _ = load_knowledge_base(folder)
    record = kb.get(record_id)
    if record is None:
        from kb.suggest import did_you_mean

        hint = did_you_mean(record_id.removesuffix(".yaml"), kb.records, "`kb list` shows the ids")
        raise click.UsageError(f"no record {record_id!r} under {folder}; {hint}")
    try:
        bindings = {name: binding_spec(text) for name, text in settings.items()}
        result = evaluate(kb, record, target, bindings)
    except EvaluationError as exc:
        click.echo(f"kb calc: {exc}", err=True)
        sys.exit(2)
    for line in result.trail:
        click.echo(line)
