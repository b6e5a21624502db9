"""What README.md, docs/integrations.md and action.yml name exists: the tag, the hook, the inputs.

The documented `rev:` is `v` + kb's version, an annotated tag of this repository whose
tree carries that version and the hook; every `@v...` of this repository in the docs is
that tag; every hook id and action input the snippets use is defined.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from kb import __version__
from tests.conftest import REPO

OURS = re.compile(r"<this repository>@(v[\w.]+)")  # pip/uses lines that name this repository


def fenced_yaml(path: Path) -> list[object]:
    text = path.read_text(encoding="utf-8")
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, flags=re.S)]


def pre_commit_configs(path: Path) -> list[dict[str, object]]:
    return [doc for doc in fenced_yaml(path) if isinstance(doc, dict) and "repos" in doc]


def workflow_steps(path: Path) -> list[dict[str, object]]:
    steps = []
    for doc in fenced_yaml(path):
        if isinstance(doc, dict) and "jobs" in doc:
            for job in doc["jobs"].values():
                steps.extend(job.get("steps", []))
    return steps


DOCUMENTED_REV = f"v{__version__}"
HOOK_IDS = {hook["id"] for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("doc", ["README.md", "docs/integrations.md"])
def test_each_pre_commit_snippet_names_the_release_and_a_defined_hook(doc: str) -> None:
    configs = pre_commit_configs(REPO / doc)
    assert configs, f"{doc} shows no pre-commit configuration"
    for config in configs:
        for repo in config["repos"]:  # type: ignore[attr-defined]
            assert repo["rev"] == DOCUMENTED_REV
            assert {hook["id"] for hook in repo["hooks"]} <= HOOK_IDS


@pytest.mark.parametrize("doc", ["README.md", "docs/integrations.md", "action.yml"])
def test_every_pinned_version_of_this_repository_is_the_release(doc: str) -> None:
    text = (REPO / doc).read_text(encoding="utf-8")
    assert set(OURS.findall(text)) <= {DOCUMENTED_REV}


def test_the_documented_workflow_uses_only_the_actions_inputs() -> None:
    steps = [
        step
        for step in workflow_steps(REPO / "docs/integrations.md")
        if OURS.search(str(step.get("uses", "")))
    ]
    assert steps, "docs/integrations.md shows no workflow using the action"
    inputs = set(ACTION["inputs"])
    for step in steps:
        assert set(step.get("with", {})) <= inputs, step


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=False
    )


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="not a git checkout (e.g. an sdist)")
def test_the_release_tag_exists_annotated_with_this_version_and_the_hook() -> None:
    if not git("tag", "--list").stdout.strip():
        # a clone made without tags (CI clones the submitted main only): nothing to read;
        # said as a skip, and every checkout that has the project's tags checks them
        pytest.skip("this clone carries no tags; the release tag is checked where tags exist")
    kind = git("cat-file", "-t", f"refs/tags/{DOCUMENTED_REV}")
    assert kind.returncode == 0, f"no tag {DOCUMENTED_REV}: `pre-commit install-hooks` fails"
    assert kind.stdout.strip() == "tag", "a lightweight tag: release with `git tag -a`"
    init = git("show", f"{DOCUMENTED_REV}:kb/__init__.py").stdout
    assert f'__version__ = "{__version__}"' in init
    hooks = yaml.safe_load(git("show", f"{DOCUMENTED_REV}:.pre-commit-hooks.yaml").stdout)
    assert {hook["id"] for hook in hooks} >= {"kb-validate"}
    action = yaml.safe_load(git("show", f"{DOCUMENTED_REV}:action.yml").stdout)
    assert set(action["inputs"]) >= {"root", "args"}


def test_the_pages_workflow_can_read_the_repository() -> None:
    (pages,) = [
        doc
        for doc in fenced_yaml(REPO / "docs/integrations.md")
        if isinstance(doc, dict) and "permissions" in doc
    ]
    # an explicit permissions block drops every other scope: checkout needs contents: read
    assert pages["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}


def test_the_documented_tool_kb_table_is_valid(tmp_path: Path) -> None:
    from kb.toolconfig import load

    text = (REPO / "docs/integrations.md").read_text(encoding="utf-8")
    (table,) = re.findall(r"```toml\n(\[tool\.kb\]\n.*?)```", text, flags=re.S)
    (tmp_path / "pyproject.toml").write_text(table, encoding="utf-8")
    (tmp_path / "records").mkdir()
    config = load(tmp_path / "records")
    assert config.select == ("SC", "RF", "EQ") and config.ignore == ("PR003",)
    assert (config.fail_on, config.output_format) == ("warning", "concise")
