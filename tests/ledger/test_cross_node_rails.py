"""A ring all-reduce across nodes runs over every NIC of a node (`cross_node_rails`).

kb/data/end-to-end.json `cross_node_rails`, kb.ledger.rails and flops/allreduce-latency-floor
(rail_bus_bandwidth) state one figure: NCCL runs one ring on each NIC (sources/nccl-issue-601),
so the crossing ring's bus bandwidth is W = min(min(NICs, ranks a node) x one port, the
GPU's scale-up rate). These tests hold the ledger, the scenario (`kb plan`, the end-to-end
rows) and the flop class to the same figure, worked by hand for the question of issue 35's
acceptance placement (Llama 3.1 70B, TP16 over two nodes, batch 64) on the nodes no measured
curve covers (H200's; the H100 placement's all-reduces are measured since session 24), and
the words kb prints where it takes the NIC count or lacks it.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from click.testing import CliRunner

from kb.cli import cli
from kb.ledger import rails
from kb.ledger.scenario import Scenario, evaluate
from kb.model import KnowledgeBase

ROOT = Path(__file__).resolve().parents[2] / "records"
PLACEMENT = "placements/llama-3.1-70b-16x-h100-two-nodes"
H100 = "hardware/nvidia-h100-sxm"
H200 = "hardware/nvidia-h200-sxm"
IB = "interconnects/infiniband-ndr"
GB = 10**9
MIB = 2**20
# the tp16 decode step's all-reduces: 2 a layer x 80 layers, 1 MiB each (64 x 8192 x 2 B)
COLLECTIVES, SIZE, STEPS, ALPHA = 160, MIB, 2 * 15, Fraction(28, 10**7)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--root", str(ROOT)])
    return result.exit_code, result.output


def test_the_bus_bandwidth_is_the_lesser_of_the_rings_and_the_scale_up_link() -> None:
    port, intra = Fraction(50 * GB), Fraction(450 * GB)
    assert rails.bus_bandwidth(port, Fraction(8), 8, intra) == 400 * GB  # a DGX H100 node
    assert rails.bus_bandwidth(port, Fraction(4), 8, intra) == 200 * GB  # fewer NICs: 4 rings
    assert rails.bus_bandwidth(port, Fraction(16), 8, intra) == 400 * GB  # one ring a rank
    assert rails.bus_bandwidth(port, Fraction(8), 8, Fraction(200 * GB)) == 200 * GB  # capped


def test_the_ledger_prices_the_flop_class_figure_worked_by_hand(shipped: KnowledgeBase) -> None:
    claim = ("--claim", "dgx-h100-rail-busbw", "--format", "json")
    code, out = run("calc", "flops/allreduce-latency-floor", "rail_bus_bandwidth", *claim)
    assert code == 0, out
    value = json.loads(out)["value"]
    assert value["unit"] == "GB/s"
    bandwidth = Fraction(value["exact"]) * GB
    assert bandwidth == 400 * GB  # 8 NDR ports x 50 GB/s, under NVLink 4's 450 GB/s
    by_hand = COLLECTIVES * (STEPS * ALPHA + Fraction(STEPS, 16) * SIZE / bandwidth)
    assert abs(by_hand - Fraction(1423, 10**5)) < Fraction(1, 10**5)  # 14.23 ms; one port 19.73
    # Since session 24 the acceptance placement's H100 all-reduces are measured (the two-node
    # curve, tests/ledger/test_composed_two_nodes.py); the same question on two H200 nodes,
    # whose reference node has the same eight NDR ports and NVLink 4, has no curve: the ledger
    # prices its crossing ring at the line rate, the flop class's figure.
    _, pricing, ring = _priced(shipped, IB, H200)
    assert ring == by_hand
    assert any("8 NICs a node" in p and "cross_node_rails" in p for p in pricing), pricing
    code, out = run("ledger", PLACEMENT, "--format", "json")
    assert code == 0, out
    sides = {side["option"]: side for side in json.loads(out)["ledgers"]}
    (measured,) = sides["tp16"]["transfers"]
    assert measured["link"] == IB and measured["provenance"] == "measured"
    assert "cross_node_rails" not in measured["pricing"]


def _tp16(
    shipped: KnowledgeBase, inter_link: str, hardware: str = H100
) -> tuple[Fraction, tuple[str, ...]]:
    return _priced(shipped, inter_link, hardware)[:2]


def _priced(
    shipped: KnowledgeBase, inter_link: str, hardware: str
) -> tuple[Fraction, tuple[str, ...], Fraction]:
    """The TP16 question's TPOT, its pricing and its all-reduces' time a step."""
    (priced,) = evaluate(
        [
            Scenario(
                model="models/llama-3.1-70b", hardware=hardware, count=16, nodes=2, tp=16,
                batch=64, context=2048, engine="engines/nemo", inter_link=inter_link,
            )
        ],
        shipped,
    )  # fmt: skip
    assert priced.fits and priced.tpot is not None, priced.problems
    exposed = {row.name: row for row in priced.rows}["exposed"]
    return priced.tpot, priced.pricing, exposed.inputs["tp-all-reduce"]


def test_a_network_not_the_reference_nodes_runs_over_one_port_and_says_so(
    shipped: KnowledgeBase,
) -> None:
    _, pricing = _tp16(shipped, IB, H200)  # no curve prices H200's: the line rate, 8 NICs
    assert any("8 NICs a node" in p and "cross_node_rails" in p for p in pricing), pricing
    other = "interconnects/ethernet-400g-roce"
    _, pricing = _tp16(shipped, other)
    assert any("one NIC a node" in p for p in pricing), pricing
    assert "8 NICs a node" in rails.assumed(shipped, H100, IB)
    assert "NVIDIA DGX H100" in rails.assumed(shipped, H100, IB)
    assert "one NIC a node" in rails.assumed(shipped, H100, other)
