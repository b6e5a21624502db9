"""Time the equations engine on the shipped records: cold (no cache) and warm (cache hit).

    python bench/equations.py            # 3 runs of each
    python bench/equations.py --runs 5

Prints, for `kb validate` as a whole process, the median wall time with an
empty result cache and with a warm one; then, in one process, the engine's own
time and how many records did symbolic work (Analysis.stats) cold and warm.
Timing is reported, never judged.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RECORDS = REPO / "records"


def _validate(cache: Path) -> float:
    env = {**os.environ, "KB_CACHE_DIR": str(cache)}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "kb", "validate", "--root", str(RECORDS)],
        env=env,
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - started


def whole_process(runs: int) -> None:
    cold, warm = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            cold.append(_validate(Path(folder)))
            warm.append(_validate(Path(folder)))
    print(
        f"kb validate, shipped records, cold cache: median {statistics.median(cold):.3f} s "
        f"(min {min(cold):.3f}, max {max(cold):.3f})"
    )
    print(
        f"kb validate, shipped records, warm cache: median {statistics.median(warm):.3f} s "
        f"(min {min(warm):.3f}, max {max(warm):.3f})"
    )


def in_process() -> None:
    from kb.equations import engine
    from kb.loader import load_knowledge_base

    with tempfile.TemporaryDirectory() as folder:
        os.environ["KB_CACHE_DIR"] = folder
        for label in ("cold", "warm"):
            kb, _ = load_knowledge_base(RECORDS)
            started = time.perf_counter()
            analysis = engine.analyse(kb)
            elapsed = time.perf_counter() - started
            items = sum(len(r.items) for r in analysis.results.values())
            print(
                f"engine {label}: {elapsed * 1000:.0f} ms, {items} items, "
                f"{analysis.stats.symbolic} records checked symbolically, "
                f"{analysis.stats.cached} from cache"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    whole_process(args.runs)
    in_process()


if __name__ == "__main__":
    main()
