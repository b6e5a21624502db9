"""`kb plan` on the shipped records: issue 36's acceptance, plan.v1 JSON, words not tracebacks.

The 70B question prices the mappings a reader asks for through kb.ledger.scenario, so
each figure is the composed ledger's; the DeepSeek-V3 question on eight L40S finds no
placement that fits and says so with the GiB (exit 1). Bad arguments are usage errors
(exit 2) in kb's words; a property test draws argument lists and asserts no traceback.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from kb.cli import cli
from tests.conftest import load_yaml

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / "records"
SCHEMA = REPO / "kb" / "data" / "output" / "plan.v1.schema.json"
ACCEPT = [
    "plan", "models/llama-3.1-70b", "--on", "hardware/nvidia-h100-sxm", "--count", "16",
    "--nodes", "2", "--batch", "64", "--context", "2048/256",
]  # fmt: skip
# kb runs on records/ in place: its .kb-cache starts from the one cold check's claims
# stores (tests/warm.py seed_repo) on a clean clone, not a cold derivation per worker
pytestmark = pytest.mark.usefixtures("repo_stores")


def kb_plan(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--root", str(ROOT)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def two_nodes() -> dict[str, object]:
    """Issue 36's acceptance command as a user types it (no link named), with an engine."""
    code, out = kb_plan(*ACCEPT, "--engine", "engines/nemo", "--format", "json")
    assert code == 0, out
    document: dict[str, object] = json.loads(out)
    return document


def test_the_two_node_question_lists_the_four_mappings_with_ledgers(two_nodes: dict) -> None:
    errors = [
        e.message
        for e in Draft202012Validator(json.loads(SCHEMA.read_text())).iter_errors(two_nodes)
    ]
    assert not errors, errors
    options = {o["name"]: o for o in two_nodes["options"]}
    assert options["tp8"]["nodes"] == 1 and options["tp8"]["devices"] == 8
    for name in ("tp8", "tp8-pp2", "tp16", "dp2-tp8"):
        o = options[name]
        assert o["status"] == "feasible", (name, o["problems"])
        assert {r["name"] for r in o["rows"]} >= {"T_useful", "T_exposed"}
        assert Fraction(o["values"]["tpot"]["exact"]) > 0
    assert options["dp2-tp8"]["pareto"]  # on some pair's front
    assert options["tp16"]["memory"]["max_batch"] > 64
    # the ratio a reader would compute: TP16 pays every all-reduce across InfiniBand
    tpot = {n: Fraction(options[n]["values"]["tpot"]["exact"]) for n in ("tp8", "tp16")}
    assert tpot["tp16"] > tpot["tp8"]
    assert options["tp16"]["tp_across_nodes"] and not options["tp8-pp2"]["tp_across_nodes"]
    # the network between the nodes was assumed from the accelerator's reference node, and said
    assert two_nodes["query"]["inter_link"] == "interconnects/infiniband-ndr"
    assert any(n.startswith("assumed: interconnects/infiniband-ndr") for n in two_nodes["notes"])
    energy = next(d for d in two_nodes["dimensions"] if d["key"] == "energy_per_token")
    assert energy["available"], energy["reason"]


def test_energy_per_token_is_the_devices_power_over_the_request(two_nodes: dict) -> None:
    """flops/serving-energy-cost-per-token's e_tok = N*P_dev*t/B, over the whole request:
    N devices at the H100 record's power for the request's latency, per output token."""
    hardware = load_yaml((ROOT / "hardware" / "nvidia-h100-sxm.yaml").read_text())
    watts = Fraction(str(hardware["power"]["value"]))
    tokens = 64 * 256  # --batch 64, --context 2048/256
    for o in two_nodes["options"]:
        if o["status"] != "feasible":
            continue
        latency = Fraction(o["values"]["latency"]["exact"])
        expected = o["devices"] * watts * latency / tokens
        assert Fraction(o["values"]["energy_per_token"]["exact"]) == expected, o["name"]


def test_tp8_is_the_composed_ledger_of_the_shipped_placement() -> None:
    """One pricing path: kb plan's TP8 at the placement's envelope is `kb ledger`'s TP8."""
    code, out = kb_plan(
        "plan", "models/llama-3.1-70b", "--on", "hardware/nvidia-h100-sxm", "--count", "8",
        "--batch", "64", "--context", "2048", "--engine", "engines/nemo", "--tp", "8",
        "--format", "json",
    )  # fmt: skip
    assert code == 0, out
    ours = next(o for o in json.loads(out)["options"] if o["name"] == "tp8")
    result = CliRunner().invoke(
        cli,
        [
            "ledger",
            "placements/llama-3.1-70b-16x-h100-two-nodes",
            "--format",
            "json",
            "--root",
            str(ROOT),
        ],
    )
    ledger = next(s for s in json.loads(result.output)["ledgers"] if s["option"] == "tp8-one-node")
    label = {"useful": "T_useful", "overhead": "T_per_layer_overhead", "exposed": "T_exposed"}
    theirs = {label.get(r["row"], r["row"]): Fraction(r["value"]["exact"]) for r in ledger["rows"]}
    mine = {r["name"]: Fraction(r["value"]["exact"]) for r in ours["rows"]}
    # the weight and KV reads and the overhead are derived alike; the all-reduces too
    # when the engine's collective matches the placement's (else this says how they differ)
    assert mine["T_useful"] == theirs["T_useful"]
    assert mine["T_per_layer_overhead"] == theirs["T_per_layer_overhead"]


def test_tp_within_node_leaves_the_crossing_tp_out_and_says_why() -> None:
    code, out = kb_plan(*ACCEPT, "--tp-within-node")
    assert code == 0, out
    assert "tp16: tp = 16 crosses the 8-device nodes (--tp-within-node leaves it out)" in out
    assert "tp8-pp2 " in out and "dp2-tp8 " in out and "TP across" not in out


def test_an_accelerator_with_no_reference_node_needs_the_link_named() -> None:
    code, out = kb_plan(
        "plan", "models/llama-3.1-8b", "--on", "hardware/nvidia-l40s", "--count", "16",
        "--nodes", "2", "--batch", "8",
    )  # fmt: skip
    assert code == 0, out
    assert "assumed:" not in out
    assert "name --inter-link, the interconnect between them" in out


def test_deepseek_v3_on_eight_l40s_fits_nowhere_with_the_gib() -> None:
    code, out = kb_plan(
        "plan", "models/deepseek-v3", "--on", "hardware/nvidia-l40s", "--count", "8"
    )
    assert code == 1
    assert "no placement fits" in out
    assert (
        "tp8 (8 devices, 1 node): does not fit: needs 156.24 GiB per device, has 44.70 GiB" in out
    )
    code, out = kb_plan(
        "plan", "models/deepseek-v3", "--on", "hardware/nvidia-l40s", "--count", "8",
        "--precision", "fp8", "--context", "4096", "--tp", "8", "--ep", "1",
    )  # fmt: skip
    assert code == 1 and "needs 78.39 GiB per device, has 44.70 GiB" in out  # issue 35's figure


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["models/llama-3.1-7b", "--on", "hardware/nvidia-h100-sxm"], "did you mean"),
        (
            ["models/llama-3.1-70b", "--on", "models/llama-3.1-70b"],
            "is a model record, not accelerator",
        ),
        (
            ["models/llama-3.1-70b", "--on", "hardware/nvidia-h100-sxm", "--context", "2048/x"],
            "--context output",
        ),
        (
            [
                "models/llama-3.1-70b",
                "--on",
                "hardware/nvidia-h100-sxm",
                "--batch",
                "2",
                "--concurrency",
                "2",
            ],
            "not both",
        ),
        (
            [
                "models/llama-3.1-70b",
                "--on",
                "hardware/nvidia-h100-sxm",
                "--count",
                "8",
                "--nodes",
                "3",
            ],
            "--nodes 3",
        ),
        (["models/llama-3.1-70b", "--on", "hardware/nvidia-h100-sxm", "--ep", "2"], "dense"),
        (
            ["models/llama-3.1-70b", "--on", "hardware/nvidia-h100-sxm", "--slo-tpot", "5 GB"],
            "positive time",
        ),
        (
            ["models/llama-3.1-70b", "--on", "hardware/nvidia-h100-sxm", "--sweep", "batch=8"],
            "two values",
        ),
        (
            ["models/llama-3.1-70b", "--on", "hardware/nvidia-h100-sxm", "--set", "slo=3"],
            "not a plan input",
        ),
    ],
)
def test_bad_input_is_a_usage_error_in_words(args: list[str], words: str) -> None:
    code, out = kb_plan("plan", *args)
    assert code == 2 and words in out, out


WORDS = st.sampled_from(
    ["models/llama-3.1-70b", "models/deepseek-v3", "hardware/nvidia-h100-sxm",
     "hardware/nvidia-l40s", "x", "", "-1", "0", "3", "8", "2048/256", "7/", "/", "1e9",
     "batch=1,8", "context=0,2", "nan",
     "engines/vllm", "interconnects/infiniband-ndr", "5 us", "fp8", "--", "batch=x"]
)  # fmt: skip
FLAGS = st.sampled_from(
    ["--count", "--nodes", "--batch", "--context", "--tp", "--pp", "--ep", "--dp", "--engine",
     "--inter-link", "--link", "--sweep", "--slo-ttft", "--precision", "--set", "--inter-latency"]
)  # fmt: skip


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(
        ["models/llama-3.1-70b", "models/deepseek-v3", "hardware/nvidia-h100-sxm", "x"]
    ),
    st.lists(st.tuples(FLAGS, WORDS), max_size=4),
)
def test_random_arguments_never_raise(model: str, pairs: list[tuple[str, str]]) -> None:
    args = ["plan", model, "--on", "hardware/nvidia-h100-sxm", "--count", "2"]
    for flag, word in pairs:
        args += [flag, word]
    result = CliRunner().invoke(cli, [*args, "--root", str(ROOT)])
    assert result.exit_code in (0, 1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args,
        repr(result.exception),
    )
    assert "Traceback" not in result.output and "internal error" not in result.output


def test_a_batch_sweep_solves_a_tie_on_the_composed_ledger() -> None:
    """On one H100 node, TP8 and DP2 x TP4 trade the fastest decode step between 288 and 304.

    (Between 304 and 312 until session 26, when Llama 3.1 70B's steps gained the non-matmul
    kernels' growth with the tokens, read from Llama-2-70B's H100 rows of the same kernel
    shape, kb/data/end-to-end.json prefill_kernels.same_shapes: TP8 runs all the batch's
    tokens on each rank, DP2 x TP4 half of them.)

    (Between 168 and 172 until session 25, when DP2 x TP4's all-reduces, at the line rate
    before, were priced from a measured 4-rank H100 curve,
    receipts/lambda-h100-4gpu-nccl-tests-all-reduce, about 24 us at decode sizes.)

    (Between 132 and 136 until session 24, when hbm_streamed_rate priced the reads at the
    H100's measured rate and re-fitted NeMo's t_o against it.)

    (Between 64 and 128 until session 14: TP8's 2 MiB all-reduces at batch 128 were priced
    from the "2MB" row of receipts/torch-nccl-all-reduce-h100-latency-by-size, now marked
    an outlier, which every curve skips.)
    """
    code, out = kb_plan(
        "plan", "models/llama-3.1-70b", "--on", "hardware/nvidia-h100-sxm", "--count", "8",
        "--context", "2048/256", "--engine", "engines/nemo", "--sweep", "batch=288,304",
        "--pp", "1", "--format", "json",
    )  # fmt: skip
    assert code == 0, out
    sweep = json.loads(out)["sweep"]
    tpot = next(c for c in sweep["changes"] if c["dimension"] == "tpot")
    assert (tpot["from"], tpot["to"]) == ("tp8", "dp2-tp4")
    assert tpot["how"].startswith("solved"), tpot["how"]
    tie = Fraction(tpot["break_even"]["exact"])
    assert 288 < tie < 304
    # the ledger itself on both sides of the tie: tp8 faster below, dp2-tp4 above
    steps = {}
    for batch in (int(tie) - int(tie) % 2, int(tie) - int(tie) % 2 + 2):
        code, out = kb_plan(
            "plan", "models/llama-3.1-70b", "--on", "hardware/nvidia-h100-sxm", "--count", "8",
            "--context", "2048/256", "--engine", "engines/nemo", "--batch", str(batch), "--pp", "1",
            "--format", "json",
        )  # fmt: skip
        options = {o["name"]: o for o in json.loads(out)["options"]}
        steps[batch] = [Fraction(options[n]["values"]["tpot"]["exact"]) for n in ("tp8", "dp2-tp4")]
    low, high = sorted(steps)
    assert steps[low][0] < steps[low][1] and steps[high][0] > steps[high][1]
