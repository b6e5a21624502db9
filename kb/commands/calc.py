"""`kb calc RECORD_ID [EQUATION_OR_SYMBOL] --set NAME=VALUE ...`: evaluate a record's equation.

Each --set binds a symbol to a quantity (`--set BW_link="63 GB/s"`), to another
record's field (`--set BW_hbm=hardware/nvidia-h200-sxm#memory.bandwidth`) or to a
product or quotient of those (`--set P="models/llama-3.1-70b#derived.params_total / 8"`,
operators between spaces). `--claim ID` starts from one claim's inputs. A symbol
is never taken from another claim: one left unset is named, with the records the
class's claims bind it to (exit 1), unless the class declares a default for it
(printed "assumed: default of this class"). A result where the equation gives no
value (N = 1 under N - 1) or outside a condition of the class's `validity:` (a
crossover above the ridge batch) is refused with the reason (exit 1). Prints the
substitution trail with units and the result. Exit 0 on success, 1 when the
question has no answer from these inputs, 2 on bad input.

The result is printed for people in a readable unit with four significant digits
(`2.33 µs`, through kb/numfmt.py, so `kb calc`, `kb ledger` and the site print a
time, a size or a bandwidth alike), followed by its exact value in the declared
unit (`(exact 2330169/1000000000000 s)`); `--format json` carries the exact
fraction as the ledger's JSON does (`{"exact": "p/q", "value": float, "unit": ...}`).
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

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
@click.option(
    "--set",
    "pairs",
    multiple=True,
    metavar="NAME=VALUE",
    help="Bind a symbol: a quantity ('63 GB/s') or record-id#dotted.field.",
)
@click.option(
    "--claim",
    "claim",
    metavar="ID",
    help="Start from the inputs of this claim of RECORD_ID (--set overrides them).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format (json carries the exact fraction).",
)
def calc(
    record_id: str,
    target: str | None,
    root: Path | None,
    pairs: tuple[str, ...],
    claim: str | None,
    fmt: str,
) -> None:
    """Evaluate TARGET (an equation id or symbol) of RECORD_ID and show the trail."""
    from kb.api import open_kb
    from kb.equations.evaluate import (
        EvaluationError,
        OutsideValidity,
        Unset,
        binding_spec,
        evaluate,
    )

    folder = records_root(root)
    require_dir(folder)
    settings = _settings(pairs)
    kb = open_kb(folder, with_references=False)
    record = kb.get(record_id)
    if record is None:
        from kb.suggest import did_you_mean

        hint = did_you_mean(record_id.removesuffix(".yaml"), kb.records, "`kb list` shows the ids")
        raise click.UsageError(f"no record {record_id!r} under {folder}; {hint}")
    try:
        bindings = {name: binding_spec(text) for name, text in settings.items()}
        result = evaluate(kb, record, target, bindings, claim=claim)
    except (Unset, OutsideValidity) as exc:  # a question without an answer: a finding
        click.echo(f"kb calc: {exc}", err=True)
        sys.exit(1)
    except EvaluationError as exc:
        click.echo(f"kb calc: {exc}", err=True)
        sys.exit(2)
    shown = result_text(result.value, result.unit)
    if fmt == "json":
        click.echo(json.dumps(result_json(result, shown), indent=2, ensure_ascii=False))
        return
    for line in result.trail:
        click.echo(line)
    click.echo(f"{result.target} = {shown}")


def result_text(value: Fraction, unit: str) -> str:
    """`2.33 µs (exact 2330169/1000000000000 s)`: readable, then exact in the declared unit.

    A time, size or bandwidth is scaled as the ledger scales it (kb.numfmt.human);
    any other unit keeps the declared one. The exact value is left out when the text is exact.
    """
    from kb import numfmt
    from kb.quantities import parse_unit

    declared = parse_unit(unit)
    scale = next((d for d in numfmt.SCALES if parse_unit(d).dims == declared.dims), None)
    base = declared.to_base(value) if scale else value
    number, shown_unit = numfmt.scaled(base, scale) if scale else (value, unit)
    readable = (
        numfmt.human(base, scale)
        if scale
        else f"{numfmt.significant(value)} {numfmt.unit_text(unit)}".removesuffix(" 1")
    )
    if Fraction(numfmt.rounded(number)) == number:
        return readable
    return f"{readable} (exact {value}{'' if unit == '1' else ' ' + unit})"


def result_json(result: Any, shown: str) -> dict[str, Any]:
    """The JSON document: the exact value as the ledger's JSON carries it, and the trail."""
    from kb.ledger.render import exact

    return {
        "record": result.record_id,
        "target": result.target,
        "equation": result.equation,
        "value": exact(result.value, result.unit),
        "shown": shown,
        "trail": result.trail,
    }
