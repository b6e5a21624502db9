"""flops/serving-tp-vs-dp composes flops/tp-decode-allreduce-time's step, KV read included.

The throughput ratio of two TP4 replicas over one TP8 replica is N_b*t_b/(N_a*t_a), and
TP8's step over TP4's is t_b/t_a: both must be what the TP class's own step_time gives at
the same inputs (its claims tp8-custom-70b-b64 and tp4-custom-70b-b64), exactly. Before
session 12 the serving class used the step without the KV read (0.804 against 0.769); since
session 24 both read HBM at the H100's measured rate (0.769 -> 0.742).
"""

from __future__ import annotations

import json
from fractions import Fraction

from click.testing import CliRunner

from kb.cli import cli

TP = "flops/tp-decode-allreduce-time"
SERVING = "flops/serving-tp-vs-dp"


def _calc(record: str, target: str, claim: str) -> Fraction:
    result = CliRunner().invoke(cli, ["calc", record, target, "--claim", claim, "--format", "json"])
    assert result.exit_code == 0, result.output
    return Fraction(json.loads(result.output)["value"]["exact"])


def test_the_tpot_ratio_is_the_tp_class_step_ratio() -> None:
    tp8 = _calc(TP, "step_time", "tp8-custom-70b-b64")
    tp4 = _calc(TP, "step_time", "tp4-custom-70b-b64")
    ratio = _calc(SERVING, "throughput_ratio", "dp-2xtp4-vs-tp8-70b")
    assert ratio == 8 * tp8 / (4 * tp4)
    assert round(tp8 / tp4, 3) == Fraction(742, 1000)


def test_without_cached_tokens_the_ideal_still_ties() -> None:
    assert _calc(SERVING, "throughput_ratio", "ideal-tie") == 1
