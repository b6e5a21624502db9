"""`.ci/cpu` counts the CPU of every process a command starts, orphans included.

A command whose grandchild outlives its parent (as chromium's renderers outlive the zygote
that forked them) burns CPU that `getrusage(RUSAGE_CHILDREN)`, and so `time`, never sees:
`.ci/cpu` adopts the orphan (PR_SET_CHILD_SUBREAPER), reaps it and counts it.
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys

import pytest

from tests.conftest import REPO

CPU = REPO / ".ci" / "cpu"
BURN = 0.6  # CPU-s the orphan burns

# The parent forks a child and waits for it; the child forks the grandchild and exits at
# once, so the grandchild is an orphan; it burns BURN CPU-s; the parent exits with argv[1].
ORPHAN = f"""
import os, sys, time
pid = os.fork()
if pid == 0:
    if os.fork() == 0:
        end = time.process_time() + {BURN}
        while time.process_time() < end:
            pass
    os._exit(0)
os.waitpid(pid, 0)
sys.exit(int(sys.argv[1]))
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's prctl")


def counted(done: subprocess.CompletedProcess[str]) -> float:
    found = re.search(r"cpu: ([0-9.]+) user \+ ([0-9.]+) sys CPU-s", done.stderr)
    assert found is not None, done.stderr
    assert "orphans included" in done.stderr, done.stderr
    return float(found[1]) + float(found[2])


def test_an_orphans_cpu_is_counted_where_rusage_misses_it() -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", ORPHAN, "0"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    missed = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    done = subprocess.run(
        [sys.executable, str(CPU), sys.executable, "-c", ORPHAN, "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert missed < BURN / 2  # the premise: plain rusage does not see the orphan
    assert counted(done) >= BURN * 0.9


def test_the_exit_status_and_the_output_are_the_commands() -> None:
    done = subprocess.run(
        [sys.executable, str(CPU), "--", sys.executable, "-c", "print('out'); raise SystemExit(3)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3
    assert done.stdout == "out\n"
    assert counted(done) > 0
    assert "not counted" not in done.stderr
