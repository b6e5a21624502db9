"""`kb ledger --set batch=...` refuses a batch below one sequence in its own words.

Before: `--set batch=0` on a composed placement divided by zero in the ledger
("internal error: ZeroDivisionError"); a fraction was refused, zero was not.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli

ROOT = Path(__file__).resolve().parents[2] / "records"
TP = "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8"


@pytest.mark.parametrize("batch", ["0", "-3", "5/2"])
def test_a_batch_below_one_sequence_is_a_usage_error(batch: str) -> None:
    result = CliRunner().invoke(cli, ["ledger", TP, "--set", f"batch={batch}", "--root", str(ROOT)])
    assert result.exit_code == 2, result.output
    assert "at least 1" in result.output or "whole number" in result.output
    assert "internal error" not in result.output
    assert "Traceback" not in result.output
