"""Builds of one output take turns; a killed build leaves the published site intact."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kb.filelock import exclusive_lock
from tests.inprocess import kb_in_process
from tests.sample import full
from tests.site.conftest import small_corpus
from tests.site.sample_site import seeded_records


def _build(out: Path, records: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kb",
            "build",
            "--no-plans",
            "--out",
            str(out),
            "--root",
            str(records),
        ],
        cwd=out.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _build_here(out: Path, records: Path) -> int:
    """What `_build` runs, in this process (tests/inprocess.py): for a build whose subject is
    what the site becomes, not the process; its exit code."""
    args = ["build", "--no-plans", "--out", str(out), "--root", str(records)]
    return kb_in_process(args, out.parent).returncode


def _digest(site: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        digest.update(path.relative_to(site).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.mark.slow
def test_concurrent_builds_of_one_output_all_succeed_and_agree(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Taking turns needs no shipped record: three builds of a small tree, started together,
    publish into one folder (kb.sitegen.output takes its lock)."""
    records = small_corpus(tmp_path_factory.mktemp("corpus"))
    out = tmp_path / "site"
    builds = [_build(out, records) for _ in range(3)]
    outputs = [b.communicate(timeout=600)[0] for b in builds]
    assert [b.returncode for b in builds] == [0, 0, 0], outputs
    assert (out / "index.html").is_file()
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name != "site")
    assert leftovers == [], leftovers  # no lock file, no staging folder, no .old
    first = _digest(out)
    assert _build_here(out, records) == 0
    assert _digest(out) == first  # deterministic: a fourth build is byte-identical


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_a_killed_build_leaves_the_published_site_and_the_next_build_works(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> None:
    """What a kill may leave is decided by the writer (kb.sitegen.output stages the site
    and swaps it in whole), not by the records, so per push the tree is the smallest one
    that has a check, record pages to write and a swap: the 40-record synthetic corpus
    (`small_corpus`: every kind, ~100 pages), as for the concurrent builds above; with
    KB_FULL=1 the shipped records, their stores seeded from one cold check of them
    (tests/warm.py). The first build leaves the corpus's store (.kb-cache beside its
    records), so every later build checks warm, and the repository's own store is never
    written. The kills fall at fixed fractions of the first build's wall time: early
    (validating), mid and late (writing pages), on a busy machine too."""
    if full():
        stores = request.getfixturevalue("shipped_stores")
        records = seeded_records(tmp_path_factory.mktemp("repo") / "repo", stores)
    else:
        records = small_corpus(tmp_path_factory.mktemp("corpus"))
    out = tmp_path / "site"
    started = time.monotonic()
    first = _build(out, records)
    assert first.communicate(timeout=600)[1] is None and first.returncode == 0
    took = time.monotonic() - started
    published = _digest(out)
    for fraction in (0.15, 0.5, 0.85):  # early (validating), mid and late (writing pages)
        victim = _build(out, records)
        time.sleep(fraction * took)
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=60)
        assert _digest(out) == published, f"site changed by a build killed at {fraction}"
    assert _build_here(out, records) == 0
    assert _digest(out) == published
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_the_lock_makes_a_second_holder_wait(tmp_path: Path) -> None:
    lock = tmp_path / ".x.lock"
    order: list[str] = []
    with exclusive_lock(lock):

        def second() -> None:
            with exclusive_lock(lock):
                order.append("second")

        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.3)
        order.append("first")
    thread.join(10)
    assert order == ["first", "second"]
    assert not lock.exists()
    assert os.listdir(tmp_path) == []
