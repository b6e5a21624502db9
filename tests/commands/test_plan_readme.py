"""The README's `kb plan` example is kb's output: every line it shows, in order.

The block between `<!-- plan-example -->` and `<!-- /plan-example -->` holds one
`$ kb plan ...` command and lines of its output; `  ...` marks lines left out. The
test runs the command on the shipped records and finds each shown line in the output,
in the order shown, so a change to the planner or to the records shows here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from kb.cli import cli

REPO = Path(__file__).resolve().parents[2]


def example() -> tuple[list[str], list[str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(
        r"<!-- plan-example -->\n```console\n(.*?)```\n<!-- /plan-example -->", text, re.S
    )
    assert found, "README.md has no plan-example block"
    lines = found.group(1).splitlines()
    assert lines[0].startswith("$ kb plan ")
    return shlex.split(lines[0][len("$ kb ") :]), lines[1:]


def test_the_readme_plan_example_is_kbs_output() -> None:
    args, shown = example()
    result = CliRunner().invoke(cli, [*args, "--root", str(REPO / "records")])
    assert result.exit_code == 0, result.output
    out = result.output.splitlines()
    at = 0
    for line in shown:
        if line.strip() in ("", "..."):
            continue
        assert line in out[at:], f"README line not in kb plan's output (after line {at}): {line!r}"
        at = out.index(line, at) + 1
    assert len([s for s in shown if s.strip() and s.strip() != "..."]) >= 30
