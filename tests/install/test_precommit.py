"""kb as a pre-commit hook, end to end, in a separate git repository of records.

The hook repository is a git repository made from this working tree and tagged, used
through `repo:` + `rev:` exactly as README.md says; pre-commit builds its own environment
from it (so the hook runs the installed package, not this checkout). Each bad commit must
be blocked with file:line; a good one passes; the hook never leaves a file behind.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.install.conftest import edit, readme_rev, run, seed_repository, user_records


@pytest.fixture
def records_repo(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path, wheel_stores: Path
) -> Path:
    """`user_records` (the sample per push) under git, the hook installed from `hook_repo`."""
    repo = tmp_path / "records-repo"
    user_records(repo / "records")
    seed_repository(repo, wheel_stores)  # a first run's stores (tests/install/conftest.py)
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {hook_repo.as_uri()}\n"
        f"    rev: {readme_rev()}\n"
        "    hooks:\n"
        "      - id: kb-validate\n",
        encoding="utf-8",
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "records")
    installed = commit_run(repo, pre_commit_home, "install")
    assert installed.returncode == 0, installed.stderr
    return repo


def commit_run(repo: Path, home: Path, *args: str):  # type: ignore[no-untyped-def]
    env = {
        "PRE_COMMIT_HOME": str(home),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x.invalid",
    }
    if args and args[0] == "install":
        return run(["pre-commit", "install"], cwd=repo, env=env)
    return run(["git", *args], cwd=repo, env=env, timeout=900)


def attempt(repo: Path, home: Path, path: str) -> str:
    """Stage `path` and try to commit it; returns the hook's output; asserts it was blocked."""
    git(repo, "add", path)
    done = commit_run(repo, home, "commit", "-m", "change")
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "1"  # nothing was committed
    assert untouched_except(repo, {path}), git(repo, "status", "--porcelain")
    return output


def untouched_except(repo: Path, changed: set[str]) -> bool:
    """Only the files the test changed differ from HEAD; no file is new (no cache, no temp)."""
    status = git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
    return {line[3:] for line in status} == changed


H100 = "records/hardware/nvidia-h100-sxm.yaml"


def test_a_yaml_error_is_blocked(records_repo: Path, pre_commit_home: Path) -> None:
    line = edit(records_repo / H100, r"^vendor: NVIDIA$", "vendor: NVIDIA: GPUs")
    output = attempt(records_repo, pre_commit_home, H100)
    assert f"{H100}:{line}:" in output and "LD004" in output


def test_a_schema_error_is_blocked(records_repo: Path, pre_commit_home: Path) -> None:
    line = edit(records_repo / H100, r"^vendor: .*$", "vendor: 42")
    assert f"{H100}:{line}:" in attempt(records_repo, pre_commit_home, H100)


def test_a_dangling_reference_is_blocked(records_repo: Path, pre_commit_home: Path) -> None:
    path = "records/receipts/azure-nd-h100-v5-hbm-bandwidth.yaml"
    line = edit(records_repo / path, r"^source: sources/\S+$", "source: sources/nowhere")
    output = attempt(records_repo, pre_commit_home, path)
    assert f"{path}:{line}:" in output and "RF001" in output


def test_a_figure_that_refutes_a_claim_in_another_file_is_blocked(
    records_repo: Path, pre_commit_home: Path
) -> None:
    edit(records_repo / H100, r"^(  bandwidth: \{value: )3350\b", r"\g<1>2000")
    output = attempt(records_repo, pre_commit_home, H100)
    assert "records/flops/" in output and " EQ0" in output


def test_a_good_commit_passes_and_leaves_nothing_behind(
    records_repo: Path, pre_commit_home: Path
) -> None:
    path = "records/sources/team-notes.yaml"
    (records_repo / path).write_text(
        "kind: source\nid: sources/team-notes\ntitle: Team notes\nversion: 1\nstatus: draft\n"
        'history:\n  - {version: 1, date: "2026-12-01", change: First encoding.}\n'
        "publisher: The team\nsource_type: documentation\n",
        encoding="utf-8",
    )
    git(records_repo, "add", path)
    done = commit_run(records_repo, pre_commit_home, "commit", "-m", "notes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kb validate" in done.stderr and "Passed" in done.stderr
    assert untouched_except(records_repo, set())


def test_with_base_head_a_change_without_a_version_bump_is_blocked(
    records_repo: Path, pre_commit_home: Path
) -> None:
    config = records_repo / ".pre-commit-config.yaml"
    config.write_text(
        config.read_text(encoding="utf-8") + "        args: [--base, HEAD]\n", encoding="utf-8"
    )
    git(records_repo, "commit", "-q", "--no-verify", "-am", "check versions against HEAD")
    path = "records/sources/azure-nd-h100-v5-results.yaml"
    edit(records_repo / path, r'^title: "(.*)"$', r'title: "\1 (retitled)"')
    git(records_repo, "add", path)
    done = commit_run(records_repo, pre_commit_home, "commit", "-m", "retitle")
    output = done.stdout + done.stderr
    assert done.returncode != 0 and f"{path}:" in output and "VR003" in output, output
