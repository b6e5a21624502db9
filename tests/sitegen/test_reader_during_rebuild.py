"""A reader of the site during a rebuild reads each file whole, the last build's or the new
one's, never a torn or empty file, and never misses a file both builds have (issue 37,
item 6). Readers run in threads beside a `kb build` subprocess that rebuilds in place.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from tests.conftest import REPO, source_yaml, write_tree
from tests.inprocess import kb_in_process

SOURCES = 40


def _tree(root: Path, title: str) -> None:
    write_tree(
        root,
        {
            f"sources/doc-{i:02d}.yaml": source_yaml(f"sources/doc-{i:02d}").replace(
                "title: A document", f"title: {title} {i}"
            )
            for i in range(SOURCES)
        },
    )


def _build(root: Path, out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "KB_CACHE_DIR": str(root.parent / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "kb", "build", "--no-plans", "--root", str(root), "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _snapshot(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


def test_a_reader_during_a_rebuild_sees_whole_old_or_new_files(tmp_path: Path) -> None:
    root, out = tmp_path / "records", tmp_path / "_site"
    _tree(root, "First")
    first = kb_in_process(  # the build the readers meet runs as `kb build` (`_build`)
        ["build", "--no-plans", "--root", str(root), "--out", str(out)],
        REPO,
        {"KB_CACHE_DIR": str(root.parent / "cache")},
    )
    assert first.returncode == 0, first.stderr
    old = _snapshot(out)
    _tree(root, "Second")  # every record page, the indexes and the search index change
    names = sorted(n for n in old if n.endswith((".html", ".js", ".json")))
    seen: dict[str, set[bytes]] = {n: set() for n in names}
    missing: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            for name in names:
                try:
                    seen[name].add((out / name).read_bytes())
                except FileNotFoundError:
                    missing.append(name)

    readers = [threading.Thread(target=read) for _ in range(3)]
    for reader in readers:
        reader.start()
    try:
        second = _build(root, out)
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert second.returncode == 0, second.stderr
    new = _snapshot(out)
    changed = [n for n in names if n in new and old[n] != new[n]]
    assert len(changed) >= SOURCES  # the rebuild really rewrote the pages being read
    assert missing == [n for n in missing if n not in new]  # only files the new build dropped
    for name in names:
        allowed = {old[name], new.get(name, old[name])}
        torn = seen[name] - allowed
        assert not torn, f"{name}: read {len(torn)} version(s) that are neither build's"
    reads = sum(len(v) for v in seen.values())
    print(f"{len(names)} files read during the rebuild, {len(changed)} changed, {reads} versions")
