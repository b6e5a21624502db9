"""docs/api.md's example runs as written and agrees with `kb calc` and `kb ledger` (issue 40).

The example is read from the document (the one ```python block under "## Example"), run
in a folder holding a copy of the shipped records, and its figures are held to the JSON
of the commands they stand for: the API gives what the command line gives.
"""

from __future__ import annotations

import json
import re
import runpy
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from tests.conftest import REPO, SHIPPED_RECORDS
from tests.inprocess import kb_in_process
from tests.warm import seed

DOC = REPO / "docs" / "api.md"
PLACEMENT = "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8"


def example() -> str:
    found = re.search(r"^## Example\n\n```python\n(.*?)^```", DOC.read_text(), re.M | re.S)
    assert found, "docs/api.md has no python example under ## Example"
    return found.group(1)


def test_the_documented_names_exist() -> None:
    import kb.api
    import kb.equations.evaluate
    import kb.ledger.analysis

    text = DOC.read_text()
    for module, name in (
        (kb.api, "validate"),
        (kb.api, "open_kb"),
        (kb.equations.evaluate, "evaluate"),
        (kb.ledger.analysis, "analyze_placement"),
    ):
        assert callable(getattr(module, name))
        assert f"`{module.__name__}.{name}(" in text
    assert "<!-- PLAN:" in text  # the marked place for kb.plan's entry point


@pytest.mark.slow
def test_the_example_runs_and_agrees_with_the_commands(
    tmp_path: Path,
    shipped_stores: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The example runs as a script (`runpy`, its own namespace: a missing import fails)
    in this process: an interpreter's start would prove nothing more."""
    shutil.copytree(SHIPPED_RECORDS, tmp_path / "records")
    script = tmp_path / "example.py"
    script.write_text(example(), encoding="utf-8")
    cache = seed(shipped_stores, tmp_path / "cache")  # tests/warm.py
    monkeypatch.setenv("KB_CACHE_DIR", str(cache))
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    runpy.run_path(str(script), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"\d+ files, 0 errors", lines[0]), lines[0]
    _, t_o, unit = lines[1].split()
    calc = kb_in_process(
        [
            "calc",
            "flops/tp-decode-allreduce-time",
            "--claim",
            "overhead-calibration",
            "--format",
            "json",
        ],
        cwd=tmp_path,
    )
    value = json.loads(calc.stdout)["value"]
    assert (Fraction(t_o), unit) == (Fraction(value["exact"]), value["unit"])
    ledger = json.loads(
        kb_in_process(["ledger", PLACEMENT, "--format", "json"], cwd=tmp_path).stdout
    )
    totals = {s["option"]: Fraction(s["total"]["exact"]) for s in ledger["ledgers"]}
    printed = {
        name: Fraction(total) for name, feasible, total in (line.split() for line in lines[2:])
    }
    assert printed == totals and len(totals) == 2
