"""Where the CPU of `kb build` after one change goes, part by part, in one process.

    python bench/rebuild_parts.py /tmp/kb-10k             # the step bench/run.py times
    python bench/site_bench.py --rebuild-parts /tmp/kb-10k # the same, through site_bench

The corpus is a folder from bench/make_corpus.py (its `records/`). The first run
builds its site cold into `<corpus>/site` (the folder bench/run.py uses) unless one
is there. Then, `--repeats` times: `hardware/bench-gpu-0000`'s HBM bandwidth is
changed by one (as bench/run.py's "kb build, 1 changed" does), and the rebuild runs
as `kb build` runs it (kb.api.validate, kb.api.open_kb, kb.sitegen.build.build), with
CPU seconds (time.process_time) and wall seconds timed around each part. Parts
nest: an indented part is inside the one above it (its time is part of the
parent's). Run it with KB_JOBS=1 to compare two trees' code in one process each.
Timing is reported, never judged.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOT = "hardware/bench-gpu-0000"

# (label, module, attribute, depth): each is wrapped by a timer while a rebuild runs.
PARTS: tuple[tuple[str, str, str, int], ...] = (
    ("validate (kb.api.validate)", "kb.api", "validate", 0),
    ("open_kb (every record, references)", "kb.api", "open_kb", 0),
    ("build (kb.sitegen.build.build)", "kb.sitegen.build", "build", 0),
    ("salt (fingerprint of code + theme)", "kb.sitegen.build", "fingerprint", 1),
    ("templates (make_environment)", "kb.sitegen.build", "make_environment", 1),
    ("page inputs (stamps, graph)", "kb.sitegen.build", "PageInputs", 1),
    ("previous manifest", "kb.sitegen.build", "load_manifest", 1),
    ("what is shown again (engine's focus)", "kb.sitegen.build", "shown_again", 1),
    ("static files", "kb.sitegen.build", "write_static", 1),
    ("home", "kb.sitegen.build", "write_home", 1),
    ("kind indexes", "kb.sitegen.build", "write_kind_indexes", 1),
    ("record pages + JSON", "kb.sitegen.build", "write_record_pages", 1),
    ("page keys (record_key)", "kb.sitegen.deps", "PageInputs.record_key", 2),
    ("JSON keys (json_key)", "kb.sitegen.deps", "PageInputs.json_key", 2),
    ("kept files (SiteWriter.reuse)", "kb.sitegen.output", "SiteWriter.reuse", 2),
    ("rendering (record_pages._render)", "kb.sitegen.record_pages", "_render", 2),
    ("hardware table", "kb.sitegen.build", "write_hardware_table", 1),
    ("charts page", "kb.sitegen.build", "write_charts", 1),
    ("rules catalogue", "kb.sitegen.build", "write_rules_catalogue", 1),
    ("methodology", "kb.sitegen.build", "write_methodology", 1),
    ("schemas", "kb.sitegen.build", "write_schemas", 1),
    ("search index + page", "kb.sitegen.build", "write_search", 1),
    ("calculator records", "kb.sitegen.build", "write_calc_records", 1),
    ("timeout check (budget_bound)", "kb.sitegen.build", "budget_bound", 1),
    ("published site listed", "kb.sitegen.output", "_listing", 1),
    ("published (renames, or a whole swap)", "kb.sitegen.output", "publish", 1),
)


@dataclass
class Tally:
    """CPU and wall seconds and calls per part, summed over the calls of one rebuild."""

    cpu: dict[str, float] = field(default_factory=dict)
    wall: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    active: set[str] = field(default_factory=set)
    gc_seconds: float = 0.0  # the cyclic collector's share (wall), from gc.callbacks
    collections: dict[str, tuple[int, float]] = field(default_factory=dict)  # gen -> n, wall s
    _gc_started: float = 0.0

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            spent = time.perf_counter() - self._gc_started
            self.gc_seconds += spent
            generation = f"gen{info['generation']}"
            count, seconds = self.collections.get(generation, (0, 0.0))
            self.collections[generation] = (count + 1, seconds + spent)

    def wrap(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if label in self.active:  # a recursive call: counted once, at the outside
                return function(*args, **kwargs)
            self.active.add(label)
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.active.discard(label)
                self.cpu[label] = self.cpu.get(label, 0.0) + time.process_time() - cpu
                self.wall[label] = self.wall.get(label, 0.0) + time.perf_counter() - wall
                self.calls[label] = self.calls.get(label, 0) + 1

        return timed


@contextmanager
def instrumented(tally: Tally) -> Iterator[None]:
    """Every part of PARTS wrapped by `tally`'s timer, put back afterwards."""
    import gc
    import importlib

    undo: list[tuple[Any, str, Any]] = []
    gc.callbacks.append(tally.on_gc)
    for label, module_name, attribute, _ in PARTS:
        owner: Any = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for step in path:
            owner = getattr(owner, step)
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        undo.append((owner, name, original))
        setattr(owner, name, tally.wrap(label, original))
    try:
        yield
    finally:
        gc.callbacks.remove(tally.on_gc)
        for owner, name, original in reversed(undo):
            setattr(owner, name, original)


def change_hot(records: Path, rep: int) -> None:
    """Move the hot accelerator's HBM bandwidth by one, up or down (bench/run.py's change)."""
    path = records / f"{HOT}.yaml"
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(r"(\n  bandwidth: \{value: )(\d+)")
    found = pattern.search(text)
    if found is None:
        raise SystemExit(f"{path}: no `bandwidth: {{value: N` to change")
    value = int(found.group(2)) + (1 if rep % 2 == 0 else -1)
    path.write_text(pattern.sub(lambda m: f"{m.group(1)}{value}", text, count=1), "utf-8")


def rebuild(records: Path, site: Path) -> Any:
    """What `kb build --out site` does after validation finds no errors."""
    from kb.api import open_kb, validate
    from kb.findings import Severity
    from kb.sitegen.build import build

    result = validate(records)
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    if errors:
        raise SystemExit(f"{records}: {len(errors)} errors; no site to build")
    return build(open_kb(records, checked=result), site, findings=result.findings)


def print_parts(tally: Tally, total_cpu: float, total_wall: float, report: Any) -> None:
    print(
        f"  rebuild: {total_cpu:.2f} s CPU, {total_wall:.2f} s wall; "
        f"{len(report.rendered)} pages rendered, {len(report.written)} files written, "
        f"{len(report.kept)} kept; cyclic GC {tally.gc_seconds:.2f} s wall; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    shown = ", ".join(f"{g}: {n} in {s:.2f} s" for g, (n, s) in sorted(tally.collections.items()))
    print(f"  collections (wall): {shown or 'none'}")
    print(f"  {'part':<44} {'cpu s':>7} {'wall s':>7} {'calls':>6}")
    for label, _, _, depth in PARTS:
        if label in tally.cpu:
            name = "  " * depth + label
            print(
                f"  {name:<44} {tally.cpu[label]:7.3f} {tally.wall[label]:7.3f} "
                f"{tally.calls[label]:6d}"
            )


def rebuild_parts(corpus: Path, repeats: int = 2) -> None:
    """Build `corpus`'s site cold if it has none, then time `repeats` one-change rebuilds."""
    os.chdir(corpus)  # kb build's display paths are relative to where it runs (bench/run.py)
    records, site = Path("records"), Path("site")
    if not (site / "index.html").is_file():
        started = time.process_time()
        rebuild(records, site)
        print(f"cold build first: {time.process_time() - started:.1f} s CPU")
    for rep in range(repeats):
        change_hot(records, rep)
        tally = Tally()
        with instrumented(tally):
            cpu, wall = time.process_time(), time.perf_counter()
            report = rebuild(records, site)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(f"rebuild {rep + 1} of {repeats} ({HOT}'s bandwidth changed):")
        print_parts(tally, cpu, wall, report)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a bench/make_corpus.py folder")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    if not (args.corpus / "records").is_dir():
        raise SystemExit(f"{args.corpus}: no records/ folder (bench/make_corpus.py writes one)")
    rebuild_parts(args.corpus, args.repeats)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
