"""Measure kb against its floors and against check-jsonschema, as whole processes.

    python bench/run.py                          # N = 1,000 and 10,000, 3 runs each
    python bench/run.py --sizes 1000,10000,100000
    python bench/run.py --quick                  # small N, 1 run: the CI smoke run
    python bench/run.py --quick --sizes 40 --records /some/records   # smaller still

For each N it writes a synthetic corpus (bench/make_corpus.py) and times, side
by side: reading the files, parsing them with CSafeLoader in one process, kb's
schema-only stage, check-jsonschema over the same files with kb's schemas, and
`kb validate` cold (cache deleted), warm (nothing changed) and after changing
one hardware record that many claims bind to; `kb build` too where it exists
(`--no-plans`, as a8304ab built, and once more cold with the plans, the default).
It prints medians, min-max, ms per record, the ratio to the CSafeLoader parse
and the peak memory of each process (from wait4's rusage). Timing is reported,
never judged: there is no pass/fail here.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from make_corpus import HOT_HARDWARE, write_corpus  # noqa: E402

KB = [sys.executable, "-m", "kb"]
SCHEMA_STAGE = "kb schema stage (load+schema+line:col)"
CJS_BATCH = 4000  # files per check-jsonschema call (keeps the command line short)


@dataclass
class Run:
    seconds: float
    cpu_seconds: float
    peak_mb: float
    exit_code: int
    last_line: str


@dataclass
class Step:
    name: str
    command: list[list[str]]  # one or more commands, timed together
    cwd: Path
    prepare: Callable[[int], None] = lambda rep: None
    runs: list[Run] = field(default_factory=list)
    note: str = ""
    floors: list[Run] = field(default_factory=list)  # the parse floor run just before each run


def run_process(argv: list[str], cwd: Path, env: dict[str, str]) -> Run:
    """Run one process to the end; wall time, peak RSS (wait4) and the last output line."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().decode("utf-8", "replace").strip().splitlines()
    cpu = usage.ru_utime + usage.ru_stime  # the child and the children it waited for
    return Run(elapsed, cpu, usage.ru_maxrss / 1024, child.returncode, lines[-1] if lines else "")


def measure(step: Step, repeats: int, env: dict[str, str], floor: list[str] | None) -> Step:
    """Run `step` `repeats` times; with `floor`, run the parse floor just before each run.

    The machine is shared: how much CPU a process gets changes from minute to
    minute, so a step is compared with a parse floor measured next to it (paired),
    not with one measured minutes earlier.
    """
    for rep in range(repeats):
        if floor is not None:
            step.floors.append(run_process(floor, step.cwd, env))
        step.prepare(rep)
        parts = [run_process(argv, step.cwd, env) for argv in step.command]
        step.runs.append(
            Run(
                sum(p.seconds for p in parts),
                sum(p.cpu_seconds for p in parts),
                max(p.peak_mb for p in parts),
                max(p.exit_code for p in parts),
                parts[-1].last_line,
            )
        )
    return step


def median(step: Step) -> float:
    return statistics.median(r.seconds for r in step.runs)


def paired(step: Step, cpu: bool = False) -> float | None:
    """The median over runs of (the step / the parse floor run just before it)."""
    if not step.floors:
        return None
    pick: Callable[[Run], float] = (lambda r: r.cpu_seconds) if cpu else (lambda r: r.seconds)
    return statistics.median(pick(r) / pick(f) for r, f in zip(step.runs, step.floors, strict=True))


# --- the steps ------------------------------------------------------------------------------


def cjs_commands(records: Path) -> list[list[str]]:
    """check-jsonschema over every file, one schema per kind, in batches."""
    from make_corpus import KIND_OF

    exe = shutil.which("check-jsonschema")
    assert exe is not None
    commands = []
    for folder in sorted(p.name for p in records.iterdir() if p.is_dir()):
        files = sorted(str(p) for p in (records / folder).glob("*.yaml"))
        schema = REPO / "kb" / "schemas" / f"{KIND_OF[folder]}.schema.json"
        for start in range(0, len(files), CJS_BATCH):
            commands.append(
                [
                    exe,
                    "--base-uri",
                    f"{(REPO / 'kb' / 'schemas').as_uri()}/",
                    "--schemafile",
                    str(schema),
                    *files[start : start + CJS_BATCH],
                ]
            )
    return commands


def hot_changer(records: Path) -> tuple[Callable[[int], None], Callable[[], None]]:
    """Change the hot accelerator's HBM bandwidth a little (claims stay within rel_tol)."""
    path = records / f"{HOT_HARDWARE}.yaml"
    original = path.read_text(encoding="utf-8")
    pattern = re.compile(r"(\n  bandwidth: \{value: )(\d+)")
    base = int(pattern.search(original).group(2))  # type: ignore[union-attr]

    def change(rep: int) -> None:
        path.write_text(
            pattern.sub(lambda m: f"{m.group(1)}{base + rep + 1}", original, count=1),
            encoding="utf-8",
        )

    def restore() -> None:
        path.write_text(original, encoding="utf-8")

    return change, restore


def dependents(records: Path) -> int:
    needle = HOT_HARDWARE.encode()
    return sum(needle in p.read_bytes() for p in records.rglob("*.yaml")) - 1


def kb_has(command: str) -> bool:
    probe = subprocess.run([*KB, command, "--help"], capture_output=True, cwd=REPO)
    return probe.returncode == 0


def build_takes(flag: str) -> bool:
    """Whether this kb's `kb build` takes `flag` (`--no-plans`: not a8304ab's)."""
    probe = subprocess.run([*KB, "build", "--help"], capture_output=True, text=True, cwd=REPO)
    return probe.returncode == 0 and flag in probe.stdout


def steps_for(corpus: Path, args: argparse.Namespace, n: int) -> list[Step]:
    records, cache = corpus / "records", corpus / ".kb-cache"
    floor = [sys.executable, str(BENCH / "floor.py")]

    def clear_cache(rep: int) -> None:
        shutil.rmtree(cache, ignore_errors=True)

    change, _ = hot_changer(records)
    steps = [
        Step("read files", [[*floor, "read", str(records)]], corpus),
        Step("parse (CSafeLoader, 1 process)", [[*floor, "parse", str(records)]], corpus),
        Step(SCHEMA_STAGE, [[*floor, "schema", str(records)]], corpus),
    ]
    if shutil.which("check-jsonschema") and n <= args.cjs_max:
        steps.append(Step("check-jsonschema (kb schemas)", cjs_commands(records), corpus))
    steps += [
        Step("kb validate, cold", [[*KB, "validate"]], corpus, clear_cache),
    ]
    if n <= args.serial_max:
        steps.append(
            Step(
                "kb validate, cold, KB_JOBS=1",
                [["env", "KB_JOBS=1", *KB, "validate"]],
                corpus,
                clear_cache,
            )
        )
    steps += [
        Step("kb validate, warm", [[*KB, "validate"]], corpus),
        Step(
            "kb validate, 1 changed",
            [[*KB, "validate"]],
            corpus,
            change,
            note=f"{HOT_HARDWARE} + {dependents(records)} dependents",
        ),
    ]
    if kb_has("build") and n <= args.build_max:
        steps += build_steps(corpus, clear_cache, change)
    return steps


def build_steps(
    corpus: Path, clear_cache: Callable[[int], None], change: Callable[[int], None]
) -> list[Step]:
    """`kb build` cold and after one change, as a8304ab builds (no plans), then with the plans.

    a8304ab's `kb build` wrote no planner pages; this kb's writes them unless `--no-plans`,
    so the compared steps pass `--no-plans` (like with like) and say so. One more step
    prints the cost of the default build, plans included, cold: it has no counterpart there.
    """
    site, planned = corpus / "site", corpus / "site-plans"
    bare = ["--no-plans"] if build_takes("--no-plans") else []
    note = "--no-plans, as a8304ab's build (no plans)" if bare else ""
    steps = [
        Step(
            "kb build, cold",
            [[*KB, "build", *bare, "--out", str(site)]],
            corpus,
            lambda rep: (clear_cache(rep), shutil.rmtree(site, ignore_errors=True)),
            note=note,
        ),
        Step(
            "kb build, 1 changed",
            [[*KB, "build", *bare, "--out", str(site)]],
            corpus,
            lambda rep: change(rep + 5),
            note=note,
        ),
    ]
    if bare:
        steps.append(
            Step(
                "kb build with the plans (default), cold",
                [[*KB, "build", "--out", str(planned)]],
                corpus,
                lambda rep: (clear_cache(rep), shutil.rmtree(planned, ignore_errors=True)),
                note="the default build; not compared: a8304ab had no plans",
            )
        )
    return steps


# --- reporting ------------------------------------------------------------------------------


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        text = Path("/proc/cpuinfo").read_text()
        cpu = re.search(r"model name\s*:\s*(.+)", text).group(1)  # type: ignore[union-attr]
    except (OSError, AttributeError):
        pass
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}; {when}"
    )


def print_table(n: int, avg_kb: float, steps: list[Step], repeats: int) -> None:
    parse = next(s for s in steps if s.name.startswith("parse"))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\nN = {n:,} records ({avg_kb:.2f} KB each on average), {repeats} run(s) per step; "
        f"load average now {load} (other processes on the machine inflate wall times; "
        f"cpu s = user+sys of the process and its children)"
    )
    header = f"{'step':<40} {'median s':>9} {'min-max s':>15} {'cpu s':>7} {'ms/rec':>7} "
    print(header + f"{'x parse':>8} {'paired':>7} {'p. cpu':>7} {'peak MB':>8}  exit  output")
    for step in steps:
        times = [r.seconds for r in step.runs]
        mid = median(step)
        span = f"{min(times):.2f}-{max(times):.2f}"
        peak = max(r.peak_mb for r in step.runs)
        exits = ",".join(sorted({str(r.exit_code) for r in step.runs}))
        cpu = statistics.median(r.cpu_seconds for r in step.runs)
        output = step.runs[-1].last_line[:60] + (f" [{step.note}]" if step.note else "")
        pair, pair_cpu = paired(step), paired(step, cpu=True)
        shown = "" if pair is None else f"{pair:.2f}"
        shown_cpu = "" if pair_cpu is None else f"{pair_cpu:.2f}"
        print(
            f"{step.name:<40} {mid:>9.3f} {span:>15} {cpu:>7.2f} {1000 * mid / n:>7.3f} "
            f"{mid / median(parse):>8.2f} {shown:>7} {shown_cpu:>7} {peak:>8.0f}  {exits:>4}  "
            f"{output}"
        )
    print_ratios(steps)


TARGETS = {  # step: the most it may take, as a multiple of the parse floor (issue 18)
    "kb validate, cold": 1.0,
    "kb validate, warm": 0.05,
    "kb validate, 1 changed": 0.15,
    "kb build, cold": 3.0,
    "kb build, 1 changed": 1.0,
}


def print_ratios(steps: list[Step]) -> None:
    """Each target against the paired ratio (wall and CPU), and check-jsonschema's ratio."""
    named = {s.name: s for s in steps}
    for name, target in TARGETS.items():
        step = named.get(name)
        if step is None:
            continue
        pair, pair_cpu = paired(step), paired(step, cpu=True)
        if pair is None or pair_cpu is None:
            pair = median(step) / median(named["parse (CSafeLoader, 1 process)"])
            pair_cpu = pair
        print(
            f"  {name + ' / parse (paired):':<44} {pair:.2f}x wall, {pair_cpu:.2f}x cpu "
            f"(target <= {target}x)"
        )
    if "check-jsonschema (kb schemas)" in named:
        cjs, stage = named["check-jsonschema (kb schemas)"], named[SCHEMA_STAGE]
        cpu = {s.name: statistics.median(r.cpu_seconds for r in s.runs) for s in (cjs, stage)}
        wall = median(cjs) / median(stage)
        print(
            f"  {'check-jsonschema / kb schema stage:':<44} {wall:.1f}x wall, "
            f"{cpu[cjs.name] / cpu[stage.name]:.1f}x cpu (target >= 30x)"
        )


def startup_times(repeats: int, base_env: dict[str, str], records: Path) -> None:
    """`kb --help`, `kb explain`, and a cold `kb validate` of `records` (the shipped records/)."""
    env = dict(base_env)
    shipped = records.resolve() == (REPO / "records").resolve()
    label = "shipped records/" if shipped else str(records)
    with tempfile.TemporaryDirectory() as cache:
        env["KB_CACHE_DIR"] = cache
        rows = [
            ("kb --help", [*KB, "--help"], None),
            ("kb explain SC001", [*KB, "explain", "SC001"], None),
            (f"kb validate ({label}), cold", [*KB, "validate", "--root", str(records)], cache),
        ]
        tree = "the shipped knowledge base" if shipped else str(records)
        print(f"\nStart-up and {tree} ({repeats} run(s))")
        for name, argv, clear in rows:
            times = []
            for _ in range(repeats):
                if clear:
                    shutil.rmtree(clear, ignore_errors=True)
                times.append(run_process(argv, REPO, env))
            mid = statistics.median(r.seconds for r in times)
            low, high = min(r.seconds for r in times), max(r.seconds for r in times)
            peak = max(r.peak_mb for r in times)
            cpu = statistics.median(r.cpu_seconds for r in times)
            print(
                f"{name:<40} {mid:>9.3f} {low:>7.2f}-{high:<7.2f} cpu {cpu:.2f} s "
                f"peak {peak:.0f} MB  exit {times[-1].exit_code}"
            )


def snapshot_code(work: Path) -> dict[str, str]:
    """Copy kb/ (with its schemas and theme) aside and run kb from the copy.

    Edits made to the tree during a long run must not change the code under test
    (they would also empty kb's cache, whose salt includes kb's source files). The
    copy is byte-compiled, as `pip install` leaves an installed kb: with
    PYTHONDONTWRITEBYTECODE set, every step would otherwise compile kb's modules anew
    (~0.08 s of CPU a process at 10,000 records, a tenth of "1 changed").
    """
    code = work / "code"
    shutil.rmtree(code, ignore_errors=True)
    for folder in ("kb",):
        if (REPO / folder).is_dir():
            shutil.copytree(
                REPO / folder,
                code / folder,
                ignore=shutil.ignore_patterns("__pycache__", ".kb-cache"),
            )
    compileall.compile_dir(code / "kb", quiet=1)
    path = os.pathsep.join(p for p in (str(code), os.environ.get("PYTHONPATH", "")) if p)
    return dict(os.environ, PYTHONPATH=path)


def bench_size(n: int, args: argparse.Namespace, work: Path, base_env: dict[str, str]) -> None:
    corpus = work / f"kb-{n}"
    start = time.perf_counter()
    write_corpus(n, corpus)
    records = corpus / "records"
    files = list(records.rglob("*.yaml"))
    avg_kb = sum(p.stat().st_size for p in files) / len(files) / 1024
    print(
        f"\n[corpus of {n:,} written in {time.perf_counter() - start:.1f} s at {corpus}]",
        flush=True,
    )
    env = dict(base_env, KB_CACHE_DIR=str(corpus / ".kb-cache"))
    steps = steps_for(corpus, args, n)
    _, restore = hot_changer(records)
    floor = [sys.executable, str(BENCH / "floor.py"), "parse", str(records)]
    try:
        for step in steps:
            pair = not args.unpaired and not step.name.startswith(("parse", "read", "check-"))
            measure(step, args.repeats, env, floor if pair else None)
            print(f"  measured {step.name}: {median(step):.3f} s", file=sys.stderr, flush=True)
    finally:
        restore()
    print_table(n, avg_kb, steps, args.repeats)
    if not args.keep:
        shutil.rmtree(corpus, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", help="comma-separated N (default 1000,10000; 200 with --quick)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per step (default 3)")
    parser.add_argument(
        "--quick", action="store_true", help="N = 200 (unless --sizes), one run: the CI smoke run"
    )
    parser.add_argument(
        "--records",
        type=Path,
        default=REPO / "records",
        help="the tree the start-up table validates cold (default: the shipped records/)",
    )
    parser.add_argument(
        "--cjs-max",
        type=int,
        default=10000,
        help="skip check-jsonschema above this N (it takes ~12 ms/record)",
    )
    parser.add_argument("--build-max", type=int, default=10000, help="skip kb build above this N")
    parser.add_argument(
        "--serial-max",
        type=int,
        default=10000,
        help="also time a one-process cold run (KB_JOBS=1) up to this N",
    )
    parser.add_argument(
        "--unpaired", action="store_true", help="no parse floor run beside each kb run"
    )
    parser.add_argument("--work", type=Path, help="where corpora go (default: a temp folder)")
    parser.add_argument("--keep", action="store_true", help="keep the corpora")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.repeats = args.sizes or "200", 1
    args.sizes = args.sizes or "1000,10000"
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s]
    print(f"kb benchmarks — {machine()}")
    work = args.work or Path(tempfile.mkdtemp(prefix="kb-bench-"))
    env = snapshot_code(work)
    startup_times(args.repeats, env, args.records)
    for n in sizes:
        bench_size(n, args, work, env)
    if args.work is None and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
