"""NO_COLOR and FORCE_COLOR, as ruff and the conventions read them (issue 40 item 1).

`kb show` is the one command that colours (a verdict and its errata). `NO_COLOR`
(non-empty) turns colour off even on a terminal; `FORCE_COLOR` (non-empty) turns it
on when piped; `NO_COLOR` wins over `FORCE_COLOR` (no-color.org); empty values are unset.
CliRunner's `color=True` stands for a terminal, `color=False` for a pipe.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from tests.commands.test_show import truth_tree

ESC = "\x1b["


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return truth_tree(tmp_path)


def show(tree: Path, terminal: bool, **env: str) -> str:
    old = os.getcwd()
    os.chdir(tree)
    try:
        done = CliRunner().invoke(cli, ["show", "flops/ring"], color=terminal, env=env)
    finally:
        os.chdir(old)
    assert done.exit_code == 0, done.output
    return done.output


def test_a_terminal_is_coloured_and_a_pipe_is_not(tree: Path) -> None:
    assert ESC in show(tree, terminal=True)
    assert ESC not in show(tree, terminal=False)


def test_no_color_turns_a_terminal_plain(tree: Path) -> None:
    assert ESC not in show(tree, terminal=True, NO_COLOR="1")


def test_force_color_colours_a_pipe(tree: Path) -> None:
    output = show(tree, terminal=False, FORCE_COLOR="1")
    assert f"{ESC}31m# erratum" in output


def test_no_color_wins_over_force_color(tree: Path) -> None:
    assert ESC not in show(tree, terminal=False, NO_COLOR="1", FORCE_COLOR="1")


def test_empty_values_change_nothing(tree: Path) -> None:
    assert ESC in show(tree, terminal=True, NO_COLOR="")
    assert ESC not in show(tree, terminal=False, FORCE_COLOR="")
