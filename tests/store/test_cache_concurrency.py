"""Concurrent runs share one cache safely: every run reports the full result, then and after.

The cache starts as a user's second run finds it (tests/warm.py: the record and equation
stores one cold check of the shipped records left): the four runs at once read those
stores, re-check what the H100 edit reaches, and all save into them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import SHIPPED_RECORDS, kb_executable
from tests.sample import full, sample_copy
from tests.warm import seed


def test_concurrent_full_runs_agree_and_leave_a_sound_cache(
    tmp_path: Path, shipped_stores: Path
) -> None:
    """On the shipped sample per push (tests/sample.py), the shipped tree with KB_FULL=1.

    What is held is the stores' writes racing (four processes saving the same keys);
    the sample's records are shipped records, so the seeded stores answer for them and
    the H100 edit refutes a claim of its flop class (tests/install/test_user_records.py),
    so the runs have new results to save.
    """
    if full():
        shutil.copytree(SHIPPED_RECORDS, tmp_path / "records")
    else:
        sample_copy(tmp_path / "records")
    seed(shipped_stores, tmp_path / ".kb-cache")
    before = {p.name: p.read_bytes() for p in (tmp_path / ".kb-cache").iterdir()}
    h100 = tmp_path / "records/hardware/nvidia-h100-sxm.yaml"
    h100.write_text(
        h100.read_text(encoding="utf-8").replace(
            "bandwidth: {value: 3350,", "bandwidth: {value: 2000,", 1
        ),
        encoding="utf-8",
    )
    command = [*kb_executable(), "validate", "--full", "--format", "json"]
    # A generous check budget: this test is about the shared cache, not about time limits
    # (four runs at once on a loaded machine can push a symbolic check past the default).
    env = {**os.environ, "KB_EQ_BUDGET": "120"}
    runs = [
        subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(4)
    ]
    outputs = [run.communicate(timeout=300)[0] for run in runs]
    assert [run.returncode for run in runs] == [1] * 4
    assert len(set(outputs)) == 1 and '"EQ0' in outputs[0]
    leftovers = [p.name for p in (tmp_path / ".kb-cache").iterdir() if p.name.startswith(".tmp")]
    assert leftovers == []
    after = {p.name: p.read_bytes() for p in (tmp_path / ".kb-cache").iterdir()}
    assert after.keys() >= before.keys() and after != before  # the runs saved into the stores
    warm = subprocess.run(
        command[:-3] + ["--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert warm.stdout == outputs[0]
