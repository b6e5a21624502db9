"""Issue 39's acceptance as a user types it: DeepSeek-V3 across two H200 nodes.

`kb plan` of DeepSeek-V3 (fp8) on 2 x 8 H200 with ep 16 prices every option, says in its note
that the expert-parallel dispatch and combine cross the network at the link's measured achieved
rate, and no row of any option rests on an unverified figure (no `unverified` link latency).
The ledger-level arithmetic is tests/ledger/test_expert_achieved_network.py's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kb.cli import cli

ROOT = Path(__file__).resolve().parents[2] / "records"
ASK = [
    "plan", "models/deepseek-v3", "--on", "hardware/nvidia-h200-sxm", "--count", "16",
    "--nodes", "2", "--ep", "16", "--batch", "64", "--context", "2048/256",
    "--precision", "fp8",
]  # fmt: skip


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    result = CliRunner().invoke(cli, [*ASK, "--format", "json", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)
    return document


def test_every_option_is_priced_and_none_rests_on_an_unverified_figure(
    plan: dict[str, Any],
) -> None:
    options = plan["options"]
    assert {o["name"] for o in options} >= {"dp16-ep16", "dp8-tp2-ep16"}
    for option in options:
        assert option["status"] == "feasible", (option["name"], option["problems"])
        assert option["provenance"] != "unverified", option["name"]
        for row in option["rows"]:
            assert row["provenance"] != "unverified", (option["name"], row["name"])


def test_the_note_says_the_dispatch_crosses_at_the_achieved_rate(plan: dict[str, Any]) -> None:
    notes = " ".join(str(n) for n in plan["notes"])
    assert "interconnects/infiniband-ndr between nodes" in notes
    assert "measured achieved rate" in notes
