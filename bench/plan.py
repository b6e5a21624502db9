"""Time `kb plan` over all placements of one model on one 16-GPU pair of nodes, warm.

    python bench/plan.py               # 5 warm runs
    python bench/plan.py --runs 9

In one process: open the shipped records once (not timed: that is `kb validate`'s
cost, measured by bench/run.py), price once to warm the caches (records' typed
views, the flop classes' parsed equations), then time `plan()` for Llama 3.1 70B on
16 x H100 SXM in two nodes (every TP/PP/DP mapping, TP across nodes included, batch
64, a 2048/256 request, the network between the nodes assumed from the accelerator's
reference node as the command assumes it) and print the number of placements, the median and the
spread of the wall and CPU time per run. The machine is shared, so CPU time is the
steadier figure. The target (issue 36) is under a second warm; timing is reported,
never judged.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RECORDS = REPO / "records"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from kb.api import open_kb, validate
    from kb.plan.planner import Query, model_facts, plan

    kb = open_kb(RECORDS, checked=validate(RECORDS))
    query = Query(
        model="models/llama-3.1-70b",
        hardware="hardware/nvidia-h100-sxm",
        count=16,
        nodes=2,
        batch=64,
        input_tokens=2048,
        output_tokens=256,
        engine="engines/nemo",
    )  # no link named: the H100's reference node network, as `kb plan` assumes it
    facts = model_facts(kb, query, RECORDS)
    first = plan(query, facts, kb)  # warm
    walls, cpus = [], []
    for _ in range(args.runs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = plan(query, facts, kb)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    feasible = len(result.of("feasible"))
    print(
        f"kb plan: {len(first.options)} placements of models/llama-3.1-70b on 16 x H100 "
        f"(2 nodes), {feasible} feasible, {len(result.fronts)} Pareto pairs"
    )
    print(
        f"  warm, {args.runs} runs: wall median {statistics.median(walls):.3f} s "
        f"(min {min(walls):.3f}, max {max(walls):.3f}); CPU median "
        f"{statistics.median(cpus):.3f} s (min {min(cpus):.3f}, max {max(cpus):.3f})"
    )


if __name__ == "__main__":
    main()
