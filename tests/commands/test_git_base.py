"""`kb validate --base REV` in a temporary git repository, run as a user would run it.

The findings' tests run the command in this process (tests/inprocess.py: the same exit
code and output, git still run by kb as a subprocess); the two usage errors run the real
console script, whose mapping to exit 2 is the entry point's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git, git_repo_with, run_kb, source_yaml
from tests.inprocess import kb_in_process

DOC = source_yaml("sources/doc")
EDITED = DOC.replace("publisher: Someone", "publisher: Someone Else")
OLD = source_yaml("sources/old")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose first commit holds records/sources/{doc,old}.yaml."""
    return git_repo_with(tmp_path / "records", {"sources/doc.yaml": DOC, "sources/old.yaml": OLD})


def validate_base(repo: Path, rev: str = "HEAD") -> tuple[int, list[tuple[str, str, int]]]:
    done = kb_in_process(["validate", "--base", rev, "--format", "json"], cwd=repo)
    assert done.returncode in (0, 1), done.stderr
    findings = json.loads(done.stdout)["findings"]
    return done.returncode, [(f["code"], Path(f["path"]).name, f["line"]) for f in findings]


def bump(text: str) -> str:
    """The record at version 2 (the history is left alone)."""
    return text.replace("\nversion: 1\n", "\nversion: 2\n")


def write(repo: Path, relative: str, text: str) -> None:
    (repo / "records" / relative).write_text(text, encoding="utf-8")


def test_unchanged_tree_is_clean(repo: Path) -> None:
    assert validate_base(repo) == (0, [])


def test_changed_without_version_bump(repo: Path) -> None:
    write(repo, "sources/doc.yaml", EDITED)
    assert validate_base(repo) == (1, [("VR003", "doc.yaml", 4)])


def test_bumped_without_history_entry(repo: Path) -> None:
    text = bump(EDITED)
    write(repo, "sources/doc.yaml", text)
    assert validate_base(repo) == (1, [("VR001", "doc.yaml", 4), ("VR003", "doc.yaml", 6)])


def test_bumped_with_history_entry_is_clean(repo: Path) -> None:
    text = bump(EDITED)
    text = text.replace(
        "First encoding.}\n",
        'First encoding.}\n  - {version: 2, date: "2026-12-01", change: New publisher.}\n',
    )
    write(repo, "sources/doc.yaml", text)
    assert validate_base(repo) == (0, [])


def test_reformatting_only_is_clean(repo: Path) -> None:
    lines = DOC.splitlines()
    reordered = ["# reformatted: comments, key order, quoting", lines[1], lines[0], *lines[2:]]
    text = "\n".join(reordered).replace("title: A document", 'title: "A document"') + "\n"
    write(repo, "sources/doc.yaml", text)
    assert validate_base(repo) == (0, [])


def test_deleting_a_live_record(repo: Path) -> None:
    (repo / "records" / "sources" / "old.yaml").unlink()
    assert validate_base(repo) == (1, [("VR004", "old.yaml", 1)])


def test_deleting_a_deprecated_record_is_clean(repo: Path) -> None:
    deprecated = bump(OLD).replace("status: draft", "status: deprecated")
    deprecated = deprecated.replace(
        "First encoding.}\n",
        'First encoding.}\n  - {version: 2, date: "2026-11-30", change: Deprecated.}\n',
    )
    write(repo, "sources/old.yaml", deprecated)
    git(repo, "commit", "-qam", "deprecate old")
    (repo / "records" / "sources" / "old.yaml").unlink()
    assert validate_base(repo) == (0, [])
    # ...but against the revision before the deprecation, the deletion is a finding
    assert validate_base(repo, "HEAD~1") == (1, [("VR004", "old.yaml", 1)])


def test_new_record_needs_no_base(repo: Path) -> None:
    write(repo, "sources/new.yaml", source_yaml("sources/new"))
    assert validate_base(repo) == (0, [])


def test_bad_revision_is_a_usage_error(repo: Path) -> None:
    done = run_kb(["validate", "--base", "no-such-rev"], cwd=repo)
    assert done.returncode == 2
    assert "--base no-such-rev" in done.stderr
    assert "Traceback" not in done.stderr


def test_base_outside_a_git_repository_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "records" / "sources").mkdir(parents=True)
    (tmp_path / "records" / "sources" / "doc.yaml").write_text(DOC, encoding="utf-8")
    done = run_kb(["validate", "--base", "HEAD"], cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
