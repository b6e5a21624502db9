"""Record files are read with a cap whatever they point to; special files are findings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.fileread import NotARegularFile, TooLarge, read_limited
from tests.conftest import REPO
from tests.sample import full as kb_full
from tests.sample import sample_copy

needs_posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(min_value=0, max_value=3000), limit=st.integers(min_value=0, max_value=3000)
)
def test_read_limited_returns_the_file_or_refuses_it_over_the_limit(
    tmp_path_factory: pytest.TempPathFactory, size: int, limit: int
) -> None:
    path = tmp_path_factory.mktemp("f") / "r.yaml"
    data = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    path.write_bytes(data)
    if size <= limit:
        assert read_limited(path, limit) == data
    else:
        with pytest.raises(TooLarge) as raised:
            read_limited(path, limit)
        assert raised.value.size == limit + 1


def test_a_device_is_refused_without_reading_it() -> None:
    with pytest.raises(NotARegularFile, match="character device"):
        read_limited("/dev/zero", 10)


@needs_posix
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile, match="FIFO"):
        read_limited(fifo, 10)


def _validate(records: Path, full: bool = True) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kb", "validate", *(["--full"] if full else [])]
    command += ["--format", "json"]
    command += ["--ignore", "PR003", "--root", str(records)]
    # A regression here would block on the FIFO or read /dev/zero forever: a timeout
    # turns that into a failure instead of a hung suite.
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)


@needs_posix
def test_special_files_and_symlink_loops_are_findings_and_nothing_is_dropped(
    tmp_path: Path,
) -> None:
    """On the shipped sample per push (tests/sample.py), the shipped tree with KB_FULL=1.

    What is held is how kb lists and reads the files of one folder: the refused files
    sit beside real records, and a dropped record would show as a smaller count or, in
    a tree closed under references and clean (tests/project/test_sample.py), as an
    RF001 in the records that cite it; the sample's sources/ are cited by the rest.
    """
    records = tmp_path / "records"
    if kb_full():
        shutil.copytree(REPO / "records", records)
    else:
        sample_copy(records)
    sources = records / "sources"
    before = len(list(records.rglob("*.yaml")))
    (sources / "zero.yaml").symlink_to("/dev/zero")
    os.mkfifo(sources / "pipe.yaml")
    (sources / "loop-a.yaml").symlink_to("loop-b.yaml")
    (sources / "loop-b.yaml").symlink_to("loop-a.yaml")
    done = _validate(records)
    assert done.returncode == 1, done.stdout + done.stderr
    findings = json.loads(done.stdout)["findings"]
    by_file = {Path(f["path"]).name: f for f in findings}
    assert set(by_file) == {"zero.yaml", "pipe.yaml", "loop-a.yaml", "loop-b.yaml"}, findings
    assert all(f["code"] == "LD001" and f["line"] == 1 for f in findings)
    assert "character device" in by_file["zero.yaml"]["message"]
    assert "FIFO" in by_file["pipe.yaml"]["message"]
    # every real record of the folder was still listed and checked: no RF001 cascade
    # (the four refused files are not records)
    assert json.loads(done.stdout)["summary"]["records"] == before
    # the next run takes the snapshot route, which hashes every file: it must not block
    # on the FIFO or read /dev/zero either, and it finds the same
    again = _validate(records, full=False)
    assert again.stdout == done.stdout, again.stderr
