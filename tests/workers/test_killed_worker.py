"""A forked worker killed mid-run (SIGKILL) stops the run with exit 2, never a silent partial
result or a hang; the next run gives a full run's findings (issue 37, item 6).

multiprocessing.Pool waited forever for a task whose worker was killed; kb.workers now
runs its pool on concurrent.futures, which notices a dead worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.inprocess import kb_in_process
from tests.sample import sample_copy

REPO = Path(__file__).resolve().parents[2]


# In a child of its own: the pool forks only in a process where no other thread runs
# (kb.workers.can_fork), and a test worker of the suite may hold one an earlier test left;
# there map_forked declines (None) and the test proves nothing (CI saw "DID NOT RAISE
# WorkerDied" once). The child asserts it can fork, so a decline is a failure, not a pass.
KILLED_POOL = """
import os, signal, sys, time
from kb.workers import WorkerDied, can_fork, map_forked

def dies_at_three(item):
    if item == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return item * 2

assert can_fork()
started = time.monotonic()
try:
    map_forked(dies_at_three, list(range(8)), min_items=1, chunk=1)
except WorkerDied as died:
    assert "worker process died" in str(died), died
else:
    sys.exit("no WorkerDied")
assert time.monotonic() - started < 60
assert map_forked(abs, list(range(-8, 0)), min_items=1, chunk=1) == list(range(8, 0, -1))
print("reported")
"""


def test_a_killed_worker_is_reported_not_waited_for() -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED_POOL],
        env={**os.environ, "KB_JOBS": "2"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "reported\n"), done.stderr


# kb validate in a child whose equations workers SIGKILL themselves at their first family.
KILLING_KB = """
import os, signal, sys
from kb.equations import engine
parent = os.getpid()
real = engine.run_record

def dying(*args, **kwargs):
    if os.getpid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)

engine.run_record = dying
engine.FORK_FAMILIES = 1
from kb.cli import main
sys.argv = ["kb", *sys.argv[1:]]
main()
"""


ARGS = ["validate", "--full", "--format", "json"]


def test_validate_with_a_killed_worker_exits_2_and_a_retry_finds_what_one_process_finds(
    tmp_path: Path,
) -> None:
    """On the shipped sample (tests/sample.py): in the child every forked equations worker
    kills itself and `FORK_FAMILIES = 1` makes the engine fork for the sample's one flop
    class, so the run meets a dead worker whatever the tree; the tree's size changes
    nothing. The killed run is a process of its own (its worker dies); the retry and
    the one-process reference run here (tests/inprocess.py) on the cache it left."""
    root = sample_copy(tmp_path / "records")
    env = {
        **os.environ,
        "KB_CACHE_DIR": str(tmp_path / "cache"),
        "KB_JOBS": "2",
        "PYTHONPATH": str(REPO),
    }
    killed = subprocess.run(
        [sys.executable, "-c", KILLING_KB, *ARGS, "--root", str(root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert killed.returncode == 2, (killed.stdout[:300], killed.stderr)
    assert killed.stdout == ""  # no partial report
    assert "kb: a worker process died" in killed.stderr
    assert "Traceback" not in killed.stderr and "internal error" not in killed.stderr
    retry = kb_in_process(
        ARGS, cwd=tmp_path, env={"KB_CACHE_DIR": str(tmp_path / "cache"), "KB_JOBS": "2"}
    )
    alone = kb_in_process(
        ARGS, cwd=tmp_path, env={"KB_CACHE_DIR": str(tmp_path / "cache-alone"), "KB_JOBS": "1"}
    )
    assert retry.returncode == alone.returncode == 0, retry.stderr + alone.stderr
    assert json.loads(retry.stdout)["findings"] == json.loads(alone.stdout)["findings"]
