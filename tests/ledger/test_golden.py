"""`kb ledger` text and JSON output for the fixture placements, compared with golden files.

Regenerate after an intended change and review the diff:

    KB_REGEN_GOLDEN=1 python -m pytest tests/ledger/test_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from tests.ledger.ledger_fixtures import fixture_records, write_tree

GOLDEN = Path(__file__).resolve().parent / "golden"
PLACEMENTS = ["fixture-both-fit", "fixture-one-fits", "fixture-tp"]


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("name", PLACEMENTS)
def test_ledger_output_matches_golden(tmp_path: Path, name: str, fmt: str) -> None:
    root = write_tree(tmp_path, fixture_records()) / "records"
    result = CliRunner().invoke(
        cli, ["ledger", f"placements/{name}", "--format", fmt, "--root", str(root)]
    )
    assert result.exit_code == 0, result.output
    golden = GOLDEN / f"{name}.{'txt' if fmt == 'text' else 'json'}"
    if os.environ.get("KB_REGEN_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(result.output, encoding="utf-8")
    assert result.output == golden.read_text(encoding="utf-8")
