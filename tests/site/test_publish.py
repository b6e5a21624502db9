"""Publishing a build (kb.sitegen.output): in place by renames, or swapped in whole.

A rebuild renames only its changed files over the published ones and deletes what
it no longer has; the files it keeps are not touched (same inode, never linked).
A reader never meets a half-written file: after a publish cut short at any rename,
every file is whole, the last build's or the new one's, and the next build first
finishes the publish from its journal, so the site becomes exactly the new build.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kb.sitegen.output as output
from kb.sitegen.output import JOURNAL, MARKER, staged_output
from tests.inprocess import kb_in_process
from tests.site.conftest import REPO, small_corpus

MARK = "A site written by `kb build`; each build replaces it whole.\n"


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def folders(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_dir()}


def publish(out: Path, files: Mapping[str, str], kept: tuple[str, ...] = ()) -> None:
    """One build of `files` (those in `kept` reused unread, as a page whose key held)."""
    with staged_output(out) as writer:
        for relpath, text in files.items():
            if not (relpath in kept and writer.reuse(relpath)):
                writer.write_text(relpath, text)


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p != out)


FIRST = {"index.html": "home 1", "a/one.html": "one", "a/two.html": "two", "b/gone.html": "x"}
SECOND = {"index.html": "home 2", "a/one.html": "one", "a/two.html": "two", "c/new.html": "new"}


def test_a_rebuild_renames_changed_files_in_place_and_touches_no_other(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    publish(out, FIRST)
    before = {p: (out / p).stat().st_ino for p in ("a/one.html", "a/two.html")}
    (out / "stray").mkdir()  # a folder no build made: a cold build has none
    publish(out, SECOND, kept=("a/two.html",))
    assert tree(out) == {MARKER: MARK.encode(), **{k: v.encode() for k, v in SECOND.items()}}
    assert folders(out) == {"a", "c"}  # b/ emptied, stray/ removed
    for relpath, inode in before.items():  # kept: neither rewritten nor linked
        assert (out / relpath).stat().st_ino == inode
        assert (out / relpath).stat().st_nlink == 1
    assert leftovers(out) == []


def test_a_publish_cut_short_leaves_whole_files_and_the_next_build_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    many = {f"p/{i}.html": f"old {i}" for i in range(12)}
    new = {**{f"p/{i}.html": f"new {i}" for i in range(4)}, "q/added.html": "added"}
    out = tmp_path / "_site"
    publish(out, {**many, "index.html": "home"})
    old_tree = tree(out)
    real, calls = os.replace, {"n": 0}

    def dies(source: str | Path, target: str | Path) -> None:
        if "/site/" in str(source):  # a staged file (the journal's rename is not counted)
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt  # killed between two renames
        real(source, target)

    monkeypatch.setattr(output.os, "replace", dies)
    intended = {**many, **new, "index.html": "home"}
    del intended["p/11.html"]
    with pytest.raises(KeyboardInterrupt):
        publish(out, intended, kept=tuple(p for p in many if p not in new))
    monkeypatch.setattr(output.os, "replace", real)
    cut = tree(out)
    expected = {MARKER: MARK.encode(), **{k: v.encode() for k, v in intended.items()}}
    assert cut != expected and cut != old_tree  # the cut fell between two renames
    for relpath, data in cut.items():  # every file whole: the last build's or the new one's
        assert data in (old_tree.get(relpath), expected.get(relpath)), relpath
    [staging] = [p for p in tmp_path.iterdir() if ".building-" in p.name]
    assert (staging / JOURNAL).is_file()
    output._recover(out)  # what the next build does first, under the lock
    assert tree(out) == expected
    assert leftovers(out) == []


def test_most_files_changed_or_a_folder_where_a_file_was_swap_the_site_in_whole(
    tmp_path: Path,
) -> None:
    out = tmp_path / "_site"
    publish(out, FIRST)
    clash = {**FIRST, "a/one.html/inner.html": "a file where the last build had one"}
    del clash["a/one.html"]
    publish(out, clash, kept=("a/two.html",))
    assert tree(out) == {MARKER: MARK.encode(), **{k: v.encode() for k, v in clash.items()}}
    everything = {k: v + " changed" for k, v in FIRST.items()}
    publish(out, everything)
    assert tree(out) == {MARKER: MARK.encode(), **{k: v.encode() for k, v in everything.items()}}
    assert leftovers(out) == []


def test_a_link_in_the_published_site_is_replaced_by_a_file_never_followed(
    tmp_path: Path,
) -> None:
    out, elsewhere = tmp_path / "_site", tmp_path / "elsewhere.html"
    publish(out, {**FIRST, "a/more.html": "m", "a/most.html": "m2"})
    elsewhere.write_text("not the site's", encoding="utf-8")
    (out / "a/one.html").unlink()
    (out / "a/one.html").symlink_to(elsewhere)
    publish(out, {**FIRST, "a/more.html": "m", "a/most.html": "m2"}, kept=tuple(FIRST))
    assert not (out / "a/one.html").is_symlink()
    assert (out / "a/one.html").read_text(encoding="utf-8") == "one"
    assert elsewhere.read_text(encoding="utf-8") == "not the site's"


@settings(max_examples=60, deadline=None)
@given(
    journal=st.one_of(
        st.binary(max_size=80),
        st.builds(
            lambda m, d: json.dumps({"moves": m, "deletes": d}).encode(),
            st.lists(st.sampled_from(["../x", "/etc/passwd", "a/../b", "", "index.html", 3])),
            st.lists(st.sampled_from(["../x", "a/", "index.html", "a//b", None])),
        ),
    )
)
def test_a_damaged_or_hostile_journal_never_moves_a_file_out_of_the_site(
    tmp_path_factory: pytest.TempPathFactory, journal: bytes
) -> None:
    root = tmp_path_factory.mktemp("j")
    out = root / "_site"
    publish(out, FIRST)
    before = tree(out)
    staging = root / "._site.building-dead"
    (staging / "site").mkdir(parents=True)
    (staging / JOURNAL).write_bytes(journal)
    (root / "x").write_text("outside", encoding="utf-8")
    output._recover(out)
    assert not staging.exists()
    assert (root / "x").read_text(encoding="utf-8") == "outside"
    after = tree(out)
    assert set(after) <= set(before)  # only what a journal may delete, inside the site
    assert all(after[p] == before[p] for p in after)


KILLED_MID_PUBLISH = """
import os, sys
from pathlib import Path
import kb.sitegen.output as output
real, calls = os.replace, [0]
def dies(source, target):
    if "/site/" in str(source):
        calls[0] += 1
        if calls[0] == int(sys.argv[1]):
            os._exit(9)  # as SIGKILL: no finally, no cleanup
    real(source, target)
output.os.replace = dies
from kb.cli import cli
cli(["build", "--no-plans", "--root", sys.argv[2], "--out", sys.argv[3]])
"""


def _kb_build_here(records: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """`kb build` of `records` into `out` run in this process (tests/inprocess.py), with the
    environment `_kb_build` gives its process: for the builds whose subject is not the program."""
    env = {"KB_CACHE_DIR": str(out.parent / "cache")}
    return kb_in_process(
        ["build", "--no-plans", "--root", str(records), "--out", str(out)], REPO, env
    )


def _kb_build(records: Path, out: Path, *script: str) -> subprocess.CompletedProcess[str]:
    """`kb build` of `records` into `out` (or `script` run with them as its arguments)."""
    args = ["-c", *script, str(records), str(out)] if script else []
    command = args or ["-m", "kb", "build", "--no-plans", "--root", str(records), "--out", str(out)]
    return subprocess.run(
        [sys.executable, *command],
        cwd=REPO,
        env={**os.environ, "KB_CACHE_DIR": str(out.parent / "cache")},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.slow
def test_kb_build_killed_mid_publish_is_finished_by_the_next_build(tmp_path: Path) -> None:
    """On a small synthetic tree (tests/site/conftest.py's small_corpus): publishing is the
    subject here, and renaming one source rewrites 14 of the site's 122 files. The killed
    build and the one that finishes its publish are `kb build` processes; the first build
    and the cold one only make sites to compare with, so they run in this process."""
    records = small_corpus(tmp_path / "corpus")
    out = tmp_path / "work" / "_site"
    assert _kb_build_here(records, out).returncode == 0
    old_tree = tree(out)
    source = records / "sources/bench-src-0001.yaml"  # its title shows on the pages citing it
    text = source.read_text(encoding="utf-8")
    source.write_text(re.sub(r"(?m)^title: .*$", "title: Renamed doc", text, count=1))
    killed = _kb_build(records, out, KILLED_MID_PUBLISH, "5")
    assert killed.returncode == 9, killed.stdout + killed.stderr
    cold = tmp_path / "cold" / "_site"
    assert _kb_build_here(records, cold).returncode == 0
    new_tree = tree(cold)
    cut = tree(out)
    assert cut != old_tree and cut != new_tree
    for relpath, data in cut.items():
        assert data in (old_tree.get(relpath), new_tree.get(relpath)), relpath
    assert _kb_build(records, out).returncode == 0
    assert tree(out) == new_tree
    assert sorted(p.name for p in out.parent.iterdir()) == ["_site", "cache"]


def test_the_journal_names_the_manifest_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kb.sitegen.manifest import MANIFEST

    out = tmp_path / "_site"
    publish(out, {**FIRST, MANIFEST: "m1"})
    seen: list[list[str]] = []
    real = output._commit

    def spy(folder: Path, out_dir: Path, moves: list[str], deletes: list[str]) -> None:
        seen.append(json.loads((folder / JOURNAL).read_text())["moves"])
        real(folder, out_dir, moves, deletes)

    monkeypatch.setattr(output, "_commit", spy)
    publish(
        out, {**FIRST, "index.html": "h2", "z/new.html": "n", MANIFEST: "m2"}, kept=("a/one.html",)
    )
    assert seen == [["z/new.html", "index.html", MANIFEST]]  # new files, replaced, manifest
