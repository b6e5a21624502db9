"""`kb plan MODEL --on ACCELERATOR`: every placement the devices admit, priced and compared.

Feasibility first (the infeasible with the GiB per device they need and have), then
each feasible option on every dimension with the Pareto front of each pair of
dimensions marked and SLO violations flagged; `--sweep batch=1,8,64` shows where the
preferred mapping changes (kb/plan/). Exit status: 0 at least one placement fits and
is priced, 1 none does (or none could be priced), 2 a usage error (an unknown id, a
malformed option), said in kb's words, never a traceback.

Across nodes (`--nodes K`, K > 1) with no `--inter-link`, the link between nodes is the
accelerator's reference node network (its record's `reference_node`), and the output
says it was assumed. Tensor-parallel groups of whole nodes are priced and marked
"TP across" (the question spans nodes, which is asking); `--tp-within-node` leaves them
out.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import click

from kb.commands._common import records_root, require_dir, root_option

PRECISIONS = ("bf16", "fp8", "int8", "int4", "fp4")
SETTABLE = ("batch", "context", "input_tokens", "output_tokens")


def _whole(text: str, what: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise click.UsageError(f"{what} {text!r}: expected a whole number") from None
    if value < 1:
        raise click.UsageError(f"{what} {text!r}: expected a whole number, at least 1")
    return value


def parse_context(text: str | None) -> tuple[int | None, int | None, int | None]:
    """`IN/OUT` -> (input, output, None); `N` -> (None, None, N): the decode context only."""
    if text is None:
        return None, None, None
    first, sep, second = text.partition("/")
    if sep:
        return _whole(first, "--context input"), _whole(second, "--context output"), None
    return None, None, _whole(first, "--context")


def parse_time(text: str | None, what: str) -> Fraction | None:
    """An SLO such as `200ms` or `0.05 s`, in seconds."""
    from kb.ledger.quantities import QuantityError, parse_setting

    if text is None:
        return None
    try:
        value, dim = parse_setting(text)
    except QuantityError as exc:
        raise click.UsageError(f"{what} {text!r}: {exc}") from None
    if dim != "s" or value <= 0:
        raise click.UsageError(f"{what} {text!r}: expected a positive time such as 200ms")
    return value


def parse_settings(pairs: tuple[str, ...]) -> dict[str, int]:
    found = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or not name or not value.strip():
            raise click.UsageError(f"--set {pair!r}: expected NAME=VALUE, e.g. batch=8")
        if name not in SETTABLE:
            raise click.UsageError(f"--set {name}: not a plan input ({', '.join(SETTABLE)})")
        found[name] = _whole(value, f"--set {name}=")
    return found


def parse_sweep(text: str | None) -> tuple[str, tuple[int, ...]] | None:
    """`batch=1,8,64` -> ("batch", (1, 8, 64)), at least two distinct values, ascending."""
    if text is None:
        return None
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or name not in ("batch", "context"):
        raise click.UsageError(f"--sweep {text!r}: expected batch=1,8,64 or context=...")
    numbers = sorted({_whole(v, f"--sweep {name}") for v in values.split(",") if v.strip()})
    if len(numbers) < 2:
        raise click.UsageError(f"--sweep {text!r}: give at least two values")
    return name, tuple(numbers)


@click.command()
@click.argument("model")
@click.option(
    "--on", "hardware", required=True, metavar="ACCELERATOR", help="e.g. hardware/nvidia-h100-sxm"
)
@click.option("--count", type=int, default=1, show_default=True, help="Devices in total.")
@click.option("--nodes", type=int, default=1, show_default=True, help="Equal nodes they form.")
@click.option(
    "--link",
    "intra_link",
    metavar="ID",
    help="Interconnect inside a node (default: the accelerator's own).",
)
@click.option(
    "--inter-link",
    metavar="ID",
    help="Interconnect between nodes (default: the accelerator's reference node network, "
    "said in the output).",
)
@click.option(
    "--intra-latency",
    metavar="TIME",
    help="A stated per-message latency inside a node, e.g. '3 us' (unverified).",
)
@click.option(
    "--inter-latency",
    metavar="TIME",
    help="A stated per-message latency between nodes, e.g. '5 us' (unverified).",
)
@click.option(
    "--engine", metavar="ID", help="e.g. engines/nemo (its calibrated per-layer overhead)."
)
@click.option("--batch", type=int, help="Sequences in flight on the whole system.")
@click.option(
    "--concurrency", type=int, help="Concurrent requests (priced as that many sequences in flight)."
)
@click.option(
    "--context",
    "context_text",
    metavar="IN/OUT|N",
    help="Prompt and output tokens (2048/256), or a decode context N alone.",
)
@click.option(
    "--precision", type=click.Choice(PRECISIONS), default="bf16", show_default=True, help="Weights."
)
@click.option(
    "--kv-precision",
    type=click.Choice(PRECISIONS),
    default="bf16",
    show_default=True,
    help="KV cache.",
)
@click.option("--slo-ttft", metavar="TIME", help="Flag options whose TTFT exceeds it, e.g. 2s.")
@click.option("--slo-tpot", metavar="TIME", help="Flag options whose TPOT exceeds it, e.g. 50ms.")
@click.option("--tp", type=int, help="Pin the tensor-parallel degree.")
@click.option("--pp", type=int, help="Pin the pipeline-parallel degree.")
@click.option("--ep", type=int, help="Pin the expert-parallel degree (MoE models).")
@click.option("--dp", type=int, help="Pin the data-parallel degree.")
@click.option(
    "--tp-across-nodes/--tp-within-node",
    default=True,
    show_default=True,
    help="Price tensor-parallel groups of whole nodes (marked 'TP across'), or leave them out.",
)
@click.option(
    "--sweep",
    "sweep_text",
    metavar="batch=1,8,64|context=...",
    help="Where the preferred mapping changes.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: kb/data/output/plan.v1.schema.json, exact fractions.",
)
@click.option(
    "--set",
    "pairs",
    multiple=True,
    metavar="NAME=VALUE",
    help=f"Vary an input ({', '.join(SETTABLE)}).",
)
@root_option
def plan(
    model: str,
    hardware: str,
    count: int,
    nodes: int,
    intra_link: str | None,
    inter_link: str | None,
    intra_latency: str | None,
    inter_latency: str | None,
    engine: str | None,
    batch: int | None,
    concurrency: int | None,
    context_text: str | None,
    precision: str,
    kv_precision: str,
    slo_ttft: str | None,
    slo_tpot: str | None,
    tp: int | None,
    pp: int | None,
    ep: int | None,
    dp: int | None,
    tp_across_nodes: bool,
    sweep_text: str | None,
    fmt: str,
    pairs: tuple[str, ...],
    root: Path | None,
) -> None:
    """Every placement of MODEL on --count ACCELERATORs, priced by the composed ledger.

    For example `kb plan models/llama-3.1-70b --on hardware/nvidia-h100-sxm --count 16
    --nodes 2 --batch 64 --context 2048/256` (between the nodes: the accelerator's
    reference node network, said in the output; --inter-link names another).
    """
    from kb.plan.enumerate import PlanError
    from kb.plan.planner import Query

    if batch is not None and concurrency is not None:
        raise click.UsageError("give --batch or --concurrency, not both")
    inputs, outputs, context = parse_context(context_text)
    settings = parse_settings(pairs)
    sweep = parse_sweep(sweep_text)
    parse_time(intra_latency, "--intra-latency")
    parse_time(inter_latency, "--inter-latency")
    pinned = tuple(
        (k, v) for k, v in (("tp", tp), ("pp", pp), ("ep", ep), ("dp", dp)) if v is not None
    )
    query = Query(
        model=model,
        hardware=hardware,
        count=count,
        nodes=nodes,
        batch=settings.get("batch", batch or concurrency or 1),
        input_tokens=settings.get("input_tokens", inputs),
        output_tokens=settings.get("output_tokens", outputs),
        context=settings.get("context", context),
        engine=engine,
        weight_precision=precision,
        kv_precision=kv_precision,
        intra_link=intra_link,
        inter_link=inter_link,
        intra_latency=intra_latency,
        inter_latency=inter_latency,
        tp_across_nodes=tp_across_nodes,
        pinned=pinned,
        slo_ttft=parse_time(slo_ttft, "--slo-ttft"),
        slo_tpot=parse_time(slo_tpot, "--slo-tpot"),
        settings=tuple((k, str(v)) for k, v in settings.items()),
        concurrency=concurrency is not None,
    )
    root = records_root(root)
    require_dir(root)
    try:
        result, swept = run(query, root, sweep)
    except (PlanError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    from kb.plan.render import text, to_json

    click.echo(to_json(result, swept) if fmt == "json" else text(result, swept), nl=False)
    if not result.of("feasible"):
        sys.exit(1)


def run(query: Any, root: Path, sweep: tuple[str, tuple[int, ...]] | None) -> tuple[Any, Any]:
    """Open the tree, check the ids, plan (and sweep)."""
    from kb.api import open_kb, validate
    from kb.plan.planner import model_facts, plan
    from kb.plan.sweep import sweep_plan

    kb = open_kb(root, checked=validate(root))
    facts = model_facts(kb, query, root)
    result = plan(query, facts, kb)
    swept = sweep_plan(query, facts, kb, sweep[0], sweep[1]) if sweep else None
    return result, swept
