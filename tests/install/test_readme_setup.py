"""README.md's two set-up commands make and use a virtual environment; CI runs the second."""

from __future__ import annotations

import re

from tests.conftest import REPO


def commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S)[:2]]


def steps(command: str) -> list[str]:
    return [step.strip() for step in command.split("&&")]


def test_both_commands_install_into_a_venv_they_create_and_activate() -> None:
    for command in commands():
        parts = steps(command)
        made = parts.index("python3 -m venv .venv")
        used = parts.index(". .venv/bin/activate")
        first_pip = next(i for i, part in enumerate(parts) if part.startswith("pip install"))
        assert made < used < first_pip, command  # PEP 668: never a system-wide pip install


def test_the_readme_says_what_needs_root() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    head = text[: text.index("## What this is")]
    assert "needs root" in head and "No step needs root" in head


def test_ci_runs_the_readmes_test_command() -> None:
    script = (REPO / ".ci/run").read_text(encoding="utf-8").strip().splitlines()
    assert script[-1] == commands()[1]
