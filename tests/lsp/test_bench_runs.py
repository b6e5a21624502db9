"""bench/lsp.py runs end to end on a small tree and prints wall and CPU figures (no timing).

The bench is how issue 40's editor targets are measured; this keeps it working (its
client, its fresh-text edits, its CPU reading from /proc) without asserting a speed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

TRUTH = REPO / "tests" / "fixtures" / "truth"


def test_the_lsp_bench_prints_wall_and_cpu_for_fresh_edits(tmp_path: Path) -> None:
    shutil.copytree(TRUTH, tmp_path / "records")
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "lsp.py"),
            "--root",
            str(tmp_path / "records"),
            "--edits",
            "4",
            "--completions",
            "2",
            "--repeat",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "edits: a new text each time" in out
    assert out.count("edit -> diagnostics (4): wall p50") == 2
    assert "all rounds edit -> diagnostics: wall" in out and "CPU p50" in out
