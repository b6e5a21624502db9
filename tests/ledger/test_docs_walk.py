"""docs/ledger.md shows real output: every `$ kb ...` in its text blocks is run and held to it.

Each ```text block of the ledger guide may hold commands (`$ kb ledger ...`, `$ kb calc
...`); every line printed under a command in the guide must be a line of that command's
real output (spacing aside), so an excerpt can leave lines out but never invent or keep a
stale one. This holds the walk from workload to ledger to prediction to the measured
receipt (issue 35 acceptance item 5) to what kb prints today.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "ledger.md"


def _commands() -> list[tuple[str, list[str]]]:
    """(command, the lines the guide prints under it), in the order of the guide."""
    found: list[tuple[str, list[str]]] = []
    text = GUIDE.read_text(encoding="utf-8")
    for block in re.findall(r"```text\n(.*?)```", text, re.S):
        for raw in block.splitlines():
            line = " ".join(raw.split())
            if line.startswith("$ kb "):
                found.append((line[2:], []))
            elif line and found:
                found[-1][1].append(line)
    return found


COMMANDS = _commands()


def test_the_guide_walks_a_placement_with_real_commands() -> None:
    shown = [command for command, _ in COMMANDS]
    assert any(c.startswith("kb ledger placements/llama-2-7b-h100-nemo") for c in shown)
    assert any(c.startswith("kb calc flops/tp-decode-allreduce-time step_time") for c in shown)
    assert any(c.startswith("kb ledger placements/llama-3.1-8b-h100-vllm-energy") for c in shown)


@pytest.mark.parametrize(("command", "lines"), COMMANDS, ids=[c for c, _ in COMMANDS])
def test_every_line_the_guide_shows_is_printed(command: str, lines: list[str]) -> None:
    args = shlex.split(command)[1:]
    result = CliRunner().invoke(cli, [*args, "--root", str(ROOT / "records")])
    assert result.exit_code == 0, result.output
    printed = {" ".join(line.split()) for line in result.output.splitlines()}
    missing = [line for line in lines if line not in printed]
    assert missing == [], "\n".join(missing)
