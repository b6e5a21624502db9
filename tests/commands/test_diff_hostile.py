"""`kb diff` on hostile trees: links out of the tree, root commits, missing and unreadable
sides are findings or usage errors, never an internal error (issue 37: T3-03, T3-10)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from tests.conftest import git, git_repo_with, source_yaml


def _diff(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["diff", *args, "--root", "records", "--format", "json"])
    return result.exit_code, result.output


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "records"
    top = git_repo_with(root, {"sources/doc.yaml": source_yaml()})
    monkeypatch.chdir(top)
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    return root


def _commit(top: Path, message: str) -> None:
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", message)


@pytest.mark.parametrize("target", ["/etc/passwd", "../../../../etc/passwd", "/dev/zero"])
def test_a_committed_link_out_of_the_tree_is_a_finding(repo: Path, target: str) -> None:
    import json

    (repo / "sources" / "x.yaml").symlink_to(target)
    _commit(repo.parent, "a link out")
    code, output = _diff("HEAD~1", "HEAD")
    assert code == 0, output
    assert "internal error" not in output and "Traceback" not in output
    added = json.loads(output)["findings_added"]
    assert [(f["path"], f["code"]) for f in added] == [("records/sources/x.yaml", "LD001")]
    assert "leads outside the records tree" in added[0]["message"]
    assert target in added[0]["message"]


def test_a_link_inside_the_tree_is_followed_as_before(repo: Path) -> None:
    import json

    (repo / "sources" / "twin.yaml").symlink_to("doc.yaml")
    _commit(repo.parent, "a link inside")
    code, output = _diff("HEAD~1", "HEAD")
    assert code == 0, output
    assert not any(f["code"] == "LD001" for f in json.loads(output)["findings_added"])


def test_a_root_commit_without_records_is_an_empty_tree(tmp_path: Path, monkeypatch) -> None:
    import json

    top = tmp_path
    (top / "README").write_text("first\n", encoding="utf-8")
    git(top, "init", "-q", "-b", "main")
    _commit(top, "root: no records yet")
    (top / "records" / "sources").mkdir(parents=True)
    (top / "records" / "sources" / "doc.yaml").write_text(source_yaml(), encoding="utf-8")
    _commit(top, "records")
    monkeypatch.chdir(top)
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    root_commit = git(top, "rev-list", "--max-parents=0", "HEAD").strip()
    code, output = _diff(root_commit, "HEAD")
    assert code == 0, output
    assert json.loads(output)["added"] == ["sources/doc"]
    code, output = _diff("HEAD", root_commit)  # and the other way round: all removed
    assert code == 0, output
    assert json.loads(output)["removed"] == ["sources/doc"]


@pytest.mark.parametrize("args", [["no-such-rev"], ["HEAD", "no-such-rev"], ["HEAD~5"]])
def test_a_missing_side_is_a_usage_error(repo: Path, args: list[str]) -> None:
    code, output = _diff(*args)
    assert code == 2, output
    assert "kb diff:" in output
    assert "internal error" not in output and "Traceback" not in output


def test_an_unreadable_record_in_the_working_tree_is_a_finding(repo: Path) -> None:
    import json

    (repo / "sources" / "doc.yaml").unlink()
    os.mkfifo(repo / "sources" / "doc.yaml")  # a FIFO where the record was: never opened
    code, output = _diff("HEAD")
    assert code == 0, output
    data = json.loads(output)
    assert data["removed"] == ["sources/doc"]
    assert [f["code"] for f in data["findings_added"]] == ["LD001"]


def test_outside_a_repository_is_a_usage_error(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "records").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    code, output = _diff("HEAD")
    assert code == 2, output
    assert "internal error" not in output and "Traceback" not in output
