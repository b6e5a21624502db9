"""`kb lsp` latency as an editor sees it: edit -> diagnostics, and completion (printed figures).

    python bench/lsp.py                       # the shipped tree (records/)
    python bench/lsp.py --corpus 10000        # a synthetic tree (bench/make_corpus.py)
    python bench/lsp.py --root /tmp/kb-10k/records   # a tree already made

The server runs as its own process over stdio (tests/lsp/client.py). One record is
opened; each edit alternates a broken and the original text, and the time from
sending `didChange` to the `publishDiagnostics` that reflects it is measured (it
includes the server's debounce). Completion is timed after `flops/`. Targets
(issue 40): edit -> diagnostics p95 <= 100 ms at 265 records, <= 300 ms at 10,000;
completion <= 50 ms. Figures are printed, met or not; nothing here asserts them.
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
sys.path.insert(0, str(REPO))

from tests.lsp.client import Client  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def flop_record(root: Path) -> Path:
    """A flop class with an equation to break."""
    for path in sorted((root / "flops").glob("*.yaml")):
        if "expr: " in path.read_text():
            return path
    raise SystemExit("no flop class with an equation")


def measure(root: Path, edits: int, completions: int) -> dict[str, float]:
    env = {**os.environ, "KB_CACHE_DIR": tempfile.mkdtemp(prefix="kb-lsp-bench-")}
    lsp = Client(root.parent, env)
    lsp.initialize(root.parent.as_uri())
    path = flop_record(root)
    original = path.read_text()
    lines = original.splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if "expr: " in line)
    broken = (
        "".join(lines[:row])
        + lines[row].replace("expr: ", "expr: (", 1)
        + "".join(lines[row + 1 :])
    )
    uri = path.as_uri()
    started = time.perf_counter()
    lsp.open(uri, original)
    first = lsp.diagnostics_for(uri, timeout=600)
    cold = time.perf_counter() - started
    baseline = len(first)
    latencies = []
    for version in range(2, edits + 2):
        text = broken if version % 2 == 0 else original
        sent = time.perf_counter()
        lsp.change(uri, text, version)
        while True:
            diagnostics = lsp.diagnostics_for(uri)
            if (len(diagnostics) > baseline) == (text is broken):
                break
        latencies.append(time.perf_counter() - sent)
    lsp.change(uri, original, edits + 2)
    typed = "".join(lines[:row]) + "  x: flops/\n" + "".join(lines[row:])
    lsp.change(uri, typed, edits + 3)
    completion = []
    for _ in range(completions):
        params = {"textDocument": {"uri": uri}, "position": {"line": row, "character": 11}}
        sent = time.perf_counter()
        result = lsp.request("textDocument/completion", params)
        completion.append(time.perf_counter() - sent)
        assert result["items"], result
    lsp.close()
    return {
        "records": float(len(list(root.rglob("*.yaml")))),
        "cold_open_s": cold,
        "edit_p50_ms": 1000 * statistics.median(latencies),
        "edit_p95_ms": 1000 * percentile(latencies, 0.95),
        "completion_p50_ms": 1000 * statistics.median(completion),
        "completion_p95_ms": 1000 * percentile(completion, 0.95),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=int, default=0, help="synthetic tree of N records")
    parser.add_argument("--root", type=Path, help="a records folder to use as it is")
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--completions", type=int, default=40)
    args = parser.parse_args()
    if args.root:
        root = args.root.resolve()
    elif args.corpus:
        out = Path(tempfile.mkdtemp(prefix="kb-lsp-corpus-"))
        subprocess.run(
            [
                sys.executable,
                str(REPO / "bench" / "make_corpus.py"),
                "--n",
                str(args.corpus),
                "--out",
                str(out),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        root = out / "records" if (out / "records").is_dir() else out
    else:
        root = REPO / "records"
    figures = measure(root, args.edits, args.completions)
    print(f"kb lsp on {int(figures['records'])} records ({root})")
    print(f"  cold open -> first diagnostics: {figures['cold_open_s']:.2f} s")
    p50, p95 = figures["edit_p50_ms"], figures["edit_p95_ms"]
    print(f"  edit -> diagnostics: p50 {p50:.0f} ms, p95 {p95:.0f} ms")
    print(
        f"  completion: p50 {figures['completion_p50_ms']:.1f} ms, "
        f"p95 {figures['completion_p95_ms']:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
