"""CPU seconds of a cold `kb build`, by part, in one process (`bench/site_bench.py --parts`).

    python bench/site_bench.py --parts /tmp/kb-10k     # a folder holding records/
    python bench/site_bench.py --parts 10000           # or a corpus written for N

KB_JOBS=1 and a fresh cache folder: the check (`validate`, as `kb build` runs it)
and then the site are built in this process, so `time.process_time()` sees every
CPU second. Each part is a function of kb.sitegen wrapped with a timer (inclusive
CPU seconds and calls; an indented part is inside the one above it, and a part's
"other" is what its listed sub-parts do not cover). Nothing in kb is changed: the
wrappers are put on module attributes here, for this run only. Then, unless
`--no-whole`, the same corpus is built by `python -m kb build` as a whole process
with kb's default workers, cold, and its wall and CPU seconds (its own and its
workers', from wait4) are printed beside the machine's load average.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# (label, module, attribute, depth): the parts, in the order printed. A method is
# "Class.method". Depth 0 is a step of the build, 1 and 2 are inside the one above.
PARTS: list[tuple[str, str, str, int]] = [
    ("record pages and JSON (write_record_pages)", "kb.sitegen.build", "write_record_pages", 0),
    ("page keys (PageInputs.record_key, json_key)", "kb.sitegen.deps", "PageInputs.record_key", 1),
    ("", "kb.sitegen.deps", "PageInputs.json_key", 1),
    ("equations analysis before forking", "kb.sitegen.record_pages", "_analyse_once", 1),
    ("record contexts (record_context)", "kb.sitegen.record_pages", "record_context", 1),
    ("placement ledgers (ledger_context)", "kb.sitegen.record_page", "ledger_context", 2),
    ("flop-class charts (chart_or_reason)", "kb.sitegen.record_page", "chart_or_reason", 2),
    ("equations sections (equations_context)", "kb.sitegen.record_page", "equations_context", 2),
    ("calculators (calculator)", "kb.sitegen.record_page", "calculator", 2),
    ("field trees (fields_tree)", "kb.sitegen.record_page", "fields_tree", 2),
    ("used by (used_by)", "kb.sitegen.record_page", "used_by", 2),
    ("evidence (evidence_rows)", "kb.sitegen.record_page", "evidence_rows", 2),
    ("key results (key_results)", "kb.sitegen.record_page", "key_results", 2),
    ("summary (_summary)", "kb.sitegen.record_page", "_summary", 2),
    ("record pages, Jinja (record.html)", "kb.sitegen.site", "render_page:record.html", 1),
    ("record JSON (record_json)", "kb.sitegen.record_pages", "record_json", 1),
    (
        "writing files, all steps (SiteWriter.write_bytes)",
        "kb.sitegen.output",
        "SiteWriter.write_bytes",
        1,
    ),
    ("page inputs (PageInputs.__init__: stamps)", "kb.sitegen.deps", "PageInputs.__init__", 0),
    ("kind indexes (write_kind_indexes)", "kb.sitegen.build", "write_kind_indexes", 0),
    ("hardware table (write_hardware_table)", "kb.sitegen.build", "write_hardware_table", 0),
    ("charts page (write_charts)", "kb.sitegen.build", "write_charts", 0),
    ("search index (write_search)", "kb.sitegen.build", "write_search", 0),
    ("calculator pickers (write_calc_records)", "kb.sitegen.build", "write_calc_records", 0),
    ("schemas (write_schemas)", "kb.sitegen.build", "write_schemas", 0),
    ("rules, methodology, home, static", "kb.sitegen.build", "write_rules_catalogue", 0),
    ("", "kb.sitegen.build", "write_methodology", 0),
    ("", "kb.sitegen.build", "write_home", 0),
    ("", "kb.sitegen.build", "write_static", 0),
]


class Timer:
    """Inclusive CPU seconds and calls per key; a re-entered key counts its outer call only."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._active: set[str] = set()

    def wrap(self, key: str, function: Callable[..., Any], only: str = "") -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if key in self._active or (only and (len(args) < 2 or args[1] != only)):
                return function(*args, **kwargs)
            self._active.add(key)
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[key] = self.spent.get(key, 0.0) + time.process_time() - start
                self.calls[key] = self.calls.get(key, 0) + 1
                self._active.discard(key)

        return timed


def install(timer: Timer) -> None:
    """Put a timer on every part's function (a missing one is an error: the table would lie)."""
    for _, module_name, attribute, _ in PARTS:
        module = importlib.import_module(module_name)
        name, _, only = attribute.partition(":")
        owner: Any = module
        if "." in name:
            class_name, name = name.split(".")
            owner = getattr(module, class_name)
        original = getattr(owner, name)  # AttributeError: PARTS names a function kb lost
        setattr(owner, name, timer.wrap(attribute, original, only))


def parts(records: Path) -> list[tuple[str, float, int, int]]:
    """Build `records`' site once in this process; (label, CPU s, calls, depth) per part."""
    os.environ["KB_JOBS"] = "1"
    os.environ["KB_CACHE_DIR"] = tempfile.mkdtemp(prefix="kb-site-parts-")
    from kb.api import open_kb, validate

    timer = Timer()
    install(timer)
    from kb.sitegen.build import build

    start = time.process_time()
    result = validate(records, remember=False)
    checked = time.process_time()
    with tempfile.TemporaryDirectory(prefix="kb-site-parts-out-") as out:
        build(open_kb(records, checked=result), Path(out) / "site", findings=result.findings)
    done = time.process_time()
    rows = [("validation (kb build's check)", checked - start, 1, 0)]
    rows.append(("site (build)", done - checked, 1, 0))
    for label, _, attribute, depth in PARTS:
        spent, calls = timer.spent.get(attribute, 0.0), timer.calls.get(attribute, 0)
        if label:
            rows.append((label, spent, calls, depth + 1))
        else:  # a second function of the row above: add it there
            last = rows[-1]
            rows[-1] = (last[0], last[1] + spent, last[2] + calls, last[3])
    return rows


def whole_build(records: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one cold `python -m kb build` (default workers)."""
    with tempfile.TemporaryDirectory(prefix="kb-site-whole-") as tmp:
        env = dict(os.environ, KB_CACHE_DIR=str(Path(tmp) / "cache"), PYTHONSAFEPATH="1")
        env.pop("KB_JOBS", None)
        argv = [sys.executable, "-m", "kb", "build", "--out", str(Path(tmp) / "site")]
        start = time.perf_counter()
        child = subprocess.Popen(
            argv, cwd=records.parent, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(child.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"kb build failed on {records}")
        return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def report(records: Path, whole: bool) -> None:
    """Print the parts table (and the whole build) for the corpus at `records`."""
    load = os.getloadavg()[0]
    if whole:  # first: the in-process run below leaves this process's memory large
        wall, cpu = whole_build(records)
    print(f"kb build, cold, by part: {records} (KB_JOBS=1, one process; load {load:.1f})")
    print(f"  {'part':<58} {'CPU s':>7} {'calls':>7}")
    for label, spent, calls, depth in _in_child(records):
        print(f"  {'  ' * depth + label:<58} {spent:7.2f} {calls:7d}")
    if whole:
        print(
            f"whole `kb build`, cold, default workers: {wall:.2f} s wall, {cpu:.2f} s CPU"
            f" (load {load:.1f} before, {os.getloadavg()[0]:.1f} after)"
        )


def _in_child(records: Path) -> list[tuple[str, float, int, int]]:
    """`parts` in a fresh interpreter, so imports and memos start cold as in `kb build`."""
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1]); from site_parts import parts; "
        "print(json.dumps(parts(__import__('pathlib').Path(sys.argv[2]))))"
    )
    bench = str(Path(__file__).resolve().parent)
    env = dict(os.environ, PYTHONSAFEPATH="1")
    out = subprocess.run(
        [sys.executable, "-c", code, bench, str(records)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    return [(str(label), float(cpu), int(calls), int(depth)) for label, cpu, calls, depth in rows]
