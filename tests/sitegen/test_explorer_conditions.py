"""The explorer's receipts table names every degree a row states.

A row of TensorRT-LLM 1.0's MoE tables runs attention data parallelism with the
experts tensor-parallel (`tp: 1, dp: 8, moe_tp: 8`); shown as "TP 1" alone it would
tell a reader the model ran on one GPU's worth of parallelism.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from kb.sitegen.explorer import _conditions
from tests.conftest import SHIPPED_RECORDS

QWEN3 = "receipts/trtllm-v1.0-qwen3-235b-a22b-throughput-h100-h200-b200.yaml"


def test_dp_and_moe_tp_are_shown() -> None:
    text = _conditions({"gpus": 8, "tp": 1, "dp": 8, "moe_tp": 8}, ["hardware/nvidia-h200-sxm"])
    assert text == "nvidia-h200-sxm; GPUs 8; TP 1; DP 8; MoE TP 8"


def test_every_shipped_moe_tp_row_shows_its_degrees() -> None:
    rows = yaml.safe_load(Path(SHIPPED_RECORDS, QWEN3).read_text(encoding="utf-8"))["results"]
    split = [row for row in rows if row.get("moe_tp", 1) > 1]
    assert split
    for row in split:
        text = _conditions(row, [row["hardware"]])
        assert f"DP {row['dp']}" in text and f"MoE TP {row['moe_tp']}" in text
