"""CPU of a cold `kb validate` when one huge record sits at an id other records bind.

    python bench/suggest_worst.py            # 99,000 keys, 20 binding records
    python bench/suggest_worst.py --keys 50000 --binders 5

Issue 37 (T3-05) measured 14.4 s of CPU: each failing binding's "did you mean"
was compared with every field path of the 99,000-key record. kb.suggest now caps
the candidates (MAX_CANDIDATES) and the comparisons of one suggestion
(MAX_COMPARISONS). Prints the CPU (resource.getrusage, the child's user+sys) of a
cold `kb validate --full` of the tree, and of the same tree without the huge
record, so the difference is what the huge record costs. Reported, never judged.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HISTORY = '  - {version: 1, date: "2026-12-06", change: First encoding.}'


def huge_record(keys: int) -> str:
    lines = [
        "kind: source",
        "id: sources/huge",
        "title: A huge source",
        "version: 1",
        "status: draft",
        "history:",
        HISTORY,
        "publisher: Someone",
        "source_type: documentation",
    ]
    lines += [f"k{index:05d}: {index}" for index in range(keys)]
    return "\n".join(lines) + "\n"


def binder(index: int) -> str:
    return "\n".join(
        [
            "kind: flop_class",
            f"id: flops/binder-{index}",
            f"title: Binder {index}",
            "version: 1",
            "status: draft",
            "history:",
            HISTORY,
            "text: A phenomenon.",
            "symbols:",
            '  x: {meaning: x, unit: "1"}',
            '  y: {meaning: y, unit: "1"}',
            "equations:",
            '  twice: {expr: "y = 2*x"}',
            "claims:",
            "  - id: c",
            "    kind: numeric",
            "    of: twice",
            f"    bind: {{x: sources/huge#memory.bandwith{index}}}",
            '    expect: {value: 2, unit: "1", basis: derived, source: sources/huge}',
        ]
    )


def tree(folder: Path, keys: int, binders: int, with_huge: bool) -> Path:
    root = folder / "records"
    (root / "sources").mkdir(parents=True)
    (root / "flops").mkdir()
    if with_huge:
        (root / "sources" / "huge.yaml").write_text(huge_record(keys), encoding="utf-8")
    for index in range(binders):
        (root / "flops" / f"binder-{index}.yaml").write_text(binder(index) + "\n", "utf-8")
    return root


def cpu_of_validate(root: Path) -> tuple[float, int]:
    """(user+sys CPU seconds of a cold `kb validate --full` child, its exit status)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "KB_CACHE_DIR": str(root.parent / "cache"), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "kb", "validate", "--full", "--root", str(root)],
        env=env,
        capture_output=True,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return spent, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=99_000)
    parser.add_argument("--binders", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        huge = tree(Path(folder) / "huge", args.keys, args.binders, True)
        small = tree(Path(folder) / "small", args.keys, args.binders, False)
        size = (huge / "sources" / "huge.yaml").stat().st_size
        with_cpu, code = cpu_of_validate(huge)
        without_cpu, _ = cpu_of_validate(small)
    print(f"record of {args.keys:,} keys ({size / 1e6:.1f} MB), {args.binders} binding records")
    print(f"cold kb validate --full: {with_cpu:.2f} s CPU (exit {code})")
    print(f"without the huge record: {without_cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
