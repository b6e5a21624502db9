"""Time `kb ledger` on the shipped placements, and the ledger arithmetic on a large placement.

    python bench/ledger.py               # 3 runs of each
    python bench/ledger.py --runs 5

Prints the median wall time of `kb ledger PLACEMENT` as a whole process (imports,
load, feasibility, ledgers, comparison and the SymPy break-even) for every shipped
placement, then, in one process, the time of `compute_ledger` for one option with
1,000 transfers (exact fractions) and of one break-even solve. Timing is reported,
never judged.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RECORDS = REPO / "records"


def _kb_ledger(placement: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "kb", "ledger", placement, "--root", str(RECORDS)],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def _big_option(transfers: int) -> tuple[object, object]:
    from kb.ledger.inputs import DeviceGroup, Envelope, OptionSpec
    from kb.ledger.quantities import Figure
    from kb.ledger.transfers import TransferSpec

    def fig(value: Fraction, dim: str) -> Figure:
        return Figure(value, dim, "estimated", "bench")

    specs = tuple(
        TransferSpec(
            f"t{i}",
            "all-reduce",
            "interconnects/nvlink-4",
            8,
            160,
            fig(Fraction(16384), "B"),
            True,
            fig(Fraction(3, 10**6), "s"),
            fig(Fraction(450 * 10**9), "B/s"),
            (),
            fig(Fraction(i, 10**7), "s"),
            "/t",
        )
        for i in range(transfers)
    )
    option = OptionSpec(
        "big",
        "/o",
        (DeviceGroup("d", 8, fig(Fraction(80 * 10**9), "B"), None, "/d"),),
        8,
        None,
        fig(Fraction(3350 * 10**9), "B/s"),
        8,
        specs,
        {},
    )
    envelope = Envelope(
        "m",
        "bf16",
        "same",
        Fraction(64),
        fig(Fraction(141 * 10**9), "B"),
        fig(Fraction(141 * 10**9), "B"),
        None,
    )
    return envelope, option


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for path in sorted((RECORDS / "placements").glob("*.yaml")):
        placement = f"placements/{path.stem}"
        times = [_kb_ledger(placement) for _ in range(args.runs)]
        print(f"kb ledger {placement}: median {statistics.median(times):.3f} s")
    from kb.ledger.breakeven import break_even
    from kb.ledger.ledger import compute_ledger

    envelope, option = _big_option(1000)
    started = time.perf_counter()
    compute_ledger(envelope, option)  # type: ignore[arg-type]
    print(f"compute_ledger, 1,000 transfers: {time.perf_counter() - started:.3f} s")
    small_env, small = _big_option(1)
    started = time.perf_counter()
    break_even(small_env, small, small, "bandwidth", "interconnects/nvlink-4")  # type: ignore[arg-type]
    print(f"one break-even solve (bandwidth): {time.perf_counter() - started:.3f} s")


if __name__ == "__main__":
    main()
