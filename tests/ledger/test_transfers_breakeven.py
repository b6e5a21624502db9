"""Collective factors, receipts as calibration, and the SymPy break-even."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kb.kinds import views
from kb.kinds.receipt import Receipt
from kb.ledger import breakeven
from kb.ledger.analysis import analyze_placement
from kb.ledger.breakeven import difference
from kb.ledger.inputs import PlacementSpec, Unresolved, resolve_placement
from kb.ledger.quantities import QuantityError, exact, unit_scale
from kb.ledger.transfers import Conditions, bus_factor, collective_steps, priced_by_receipts
from kb.model import KnowledgeBase
from tests.ledger.ledger_fixtures import q


@pytest.mark.parametrize(
    ("pattern", "ranks", "steps", "factor"),
    [
        ("all-reduce", 8, 14, Fraction(14, 8)),
        ("reduce-scatter", 8, 7, Fraction(7, 8)),
        ("all-gather", 4, 3, Fraction(3, 4)),
        ("all-to-all", 2, 1, Fraction(1, 2)),
        ("point-to-point", 2, 1, Fraction(1)),
    ],
)
def test_collective_factors_follow_nccl_tests(
    pattern: str, ranks: int, steps: int, factor: Fraction
) -> None:
    assert collective_steps(pattern, ranks) == steps
    assert bus_factor(pattern, ranks) == factor


def test_reduce_scatter_plus_all_gather_is_all_reduce() -> None:
    for n in range(2, 65):
        assert bus_factor("reduce-scatter", n) + bus_factor("all-gather", n) == bus_factor(
            "all-reduce", n
        )


def test_units_are_exact_and_unknown_ones_refused() -> None:
    assert exact(3.35) == Fraction(335, 100)
    assert unit_scale("GB/s") == (Fraction(10**9), "B/s")
    assert unit_scale("GiB") == (Fraction(2**30), "B")
    assert unit_scale("Gbit/s") == (Fraction(10**9, 8), "B/s")
    # the one unit table: what the equations read, the ledger reads too
    assert unit_scale("J/s") == unit_scale("W") == (Fraction(1), "W")
    assert unit_scale("kbit") == (Fraction(125), "B")
    assert unit_scale("min") == (Fraction(60), "s")
    assert unit_scale("USD/h") == (Fraction(1, 3600), "USD/s")
    assert unit_scale("EB") == (Fraction(10**18), "B")
    assert unit_scale("PiB") == (Fraction(2**50), "B")
    assert unit_scale("B*s") == (Fraction(1), "B·s")
    assert unit_scale("1/s") == (Fraction(1), "1/s")
    for bad in ("Gbps", "GBps", "Gb", "furlong"):
        with pytest.raises(QuantityError):
            unit_scale(bad)
    with pytest.raises(QuantityError):
        exact(True)


def receipt_views(kb: KnowledgeBase) -> list[Receipt]:
    found = [views(kb).receipt(r) for r in kb.of_kind("receipt")]
    return [r for r in found if r is not None]


def receipt_bandwidth(
    receipts: list[Receipt],
    link: str,
    pattern: str,
    ranks: int,
    size: Fraction,
    hardware: frozenset[str] = frozenset(),
) -> tuple[Fraction, str] | None:
    """What the ledger prices size S at (kb.ledger.transfers.priced_by_receipts), no algorithm."""
    measured, _ = priced_by_receipts(receipts, link, size, Conditions(pattern, ranks, hardware))
    return (measured.bandwidth.value, measured.receipt) if measured else None


def test_receipt_matches_link_pattern_ranks_and_size(kb: KnowledgeBase) -> None:
    receipts = receipt_views(kb)
    assert len(receipts) == len(kb.of_kind("receipt"))
    link, size = "interconnects/fixture-fast", Fraction(128_000)
    hit = receipt_bandwidth(receipts, link, "all-reduce", 4, size)
    assert hit is not None and hit[1] == "receipts/fixture-ar" and hit[0] == 80 * 10**9
    # one row: any other size is outside the measured range, never extrapolated
    assert receipt_bandwidth(receipts, link, "all-reduce", 4, size * 2) is None
    assert receipt_bandwidth(receipts, link, "all-reduce", 4, size / 2) is None
    assert receipt_bandwidth(receipts, link, "all-gather", 4, size) is None  # other pattern
    assert receipt_bandwidth(receipts, link, "all-reduce", 8, size) is None  # other rank count
    assert (
        receipt_bandwidth(receipts, "interconnects/fixture-link", "all-reduce", 4, size) is None
    )  # other link


def test_break_even_bandwidth_is_a_tie_and_sides_are_placed(kb: KnowledgeBase) -> None:
    """Both-fit fixture: 0.1003 s + max(0, 1.6 ms + 1.28e6/x - 0.5 ms) = 0.2 s
    -> 1.28e6/x = 0.0986 -> x = 1.28e6 / 0.0986 = 6.4e9/493 B/s (about 12.98 MB/s)."""
    analysis = analyze_placement(kb.get("placements/fixture-both-fit"), kb, with_break_even=True)
    assert not isinstance(analysis, Unresolved)
    bandwidth = next(b for b in analysis.break_evens if b.parameter == "bandwidth")
    assert bandwidth.status == "tie" and bandwidth.values == (Fraction(6_400_000_000, 493),)
    spec = analysis.spec
    ref, cand = spec.reference, spec.candidates[0]
    assert (
        difference(spec.envelope, ref, cand, "bandwidth", bandwidth.link, bandwidth.values[0]) == 0
    )
    sides = {p.interconnect: p.side for p in bandwidth.sides}
    assert sides == {
        "interconnects/fixture-fast": "candidate faster",
        "interconnects/fixture-link": "candidate faster",
        "interconnects/fixture-slow": "candidate faster",
    }
    latency = next(b for b in analysis.break_evens if b.parameter == "latency")
    assert latency.values == (Fraction(312_725, 10**9),)  # 320*L = 0.100072 s


def test_break_even_places_links_on_both_sides(records: dict, kb: KnowledgeBase) -> None:
    """Raise the reference's useful rate so T_r = 100 GB / 1000 GB/s = 0.1 s. Then
    0.1003 + max(0, 1.1 ms + 1.28e6/x) = 0.1 has no positive solution: candidate never ties
    and every link falls on the reference side."""
    records["placements/fixture-both-fit"]["reference"]["useful"]["rate"] = q(1000, "GB/s")
    from tests.ledger.ledger_fixtures import make_kb

    kb = make_kb(records)
    analysis = analyze_placement(kb.get("placements/fixture-both-fit"), kb, with_break_even=True)
    bandwidth = next(b for b in analysis.break_evens if b.parameter == "bandwidth")
    assert bandwidth.status == "no tie" and bandwidth.detail.startswith("reference faster")
    assert {p.side for p in bandwidth.sides} == {"reference faster"}


def test_missing_latency_is_a_gap_not_a_zero(records: dict) -> None:
    from tests.ledger.ledger_fixtures import make_kb

    del records["interconnects/fixture-link"]["latency"]
    kb = make_kb(records)
    result = resolve_placement(kb.get("placements/fixture-both-fit"), kb)
    assert isinstance(result, Unresolved)
    assert [g.pointer for g in result.gaps] == ["/candidates/0/transfers/0/link_latency"]


def test_capacity_binds_to_the_accelerator_record(records: dict) -> None:
    from tests.ledger.ledger_fixtures import common, make_kb

    records["hardware/fixture-gpu"] = common("hardware/fixture-gpu", "accelerator") | {
        "vendor": "Fixture",
        "memory": {
            "capacity": q(80, "GB", "vendor-spec"),
            "bandwidth": q(2, "TB/s", "vendor-spec"),
        },
    }
    device = records["placements/fixture-tp"]["reference"]["devices"][0]
    del device["capacity"]
    device["hardware"] = "hardware/fixture-gpu"
    kb = make_kb(records)
    assert kb.run.schema == []
    spec = resolve_placement(kb.get("placements/fixture-tp"), kb)
    assert isinstance(spec, PlacementSpec)
    assert spec.reference.devices[0].capacity.value == 80 * 10**9
    assert spec.reference.devices[0].capacity.origin == "sources/fixture-source"
    # An accelerator that fails its schema feeds no figure: one gap names it.
    del records["hardware/fixture-gpu"]["vendor"]
    kb = make_kb(records)
    result = resolve_placement(kb.get("placements/fixture-tp"), kb)
    assert isinstance(result, Unresolved)
    assert [(g.pointer, g.blocked_by, g.cause) for g in result.gaps] == [
        ("/reference/devices/0/capacity", "hardware/fixture-gpu", "fails its schema")
    ]


def test_a_break_even_sympy_cannot_solve_is_unverified(kb: KnowledgeBase, monkeypatch) -> None:
    import sympy

    def refuse(*args: object, **kwargs: object) -> None:
        raise NotImplementedError("no")

    monkeypatch.setattr(sympy, "solveset", refuse)
    # these differences are simple enough to solve without SymPy: send them to it anyway
    monkeypatch.setattr(breakeven, "_solve_simple", lambda expr, symbol: None)
    # and SymPy is asked afresh: an answer an earlier test kept (breakeven._SOLVED) is not it
    monkeypatch.setattr(breakeven, "_SOLVED", {})
    analysis = analyze_placement(kb.get("placements/fixture-both-fit"), kb, with_break_even=True)
    assert {b.status for b in analysis.break_evens} == {"unverified"}
    assert all(b.values == () for b in analysis.break_evens)


def test_roofline_takes_the_slower_of_memory_and_compute(records: dict) -> None:
    """flops_per_item 280 GFLOP, compute 1000 TFLOP/s per device, 4 devices.
    batch 8: compute 280e9*8/(4*1e15) = 0.56 ms < memory 140 GB/(4*2000 GB/s) = 17.5 ms.
    batch 512: compute 280e9*512/4e15 = 35.84 ms > 17.5 ms, so Tuseful = 35.84 ms."""
    from kb.ledger.analysis import analyze_placement
    from tests.ledger.ledger_fixtures import make_kb

    placement = records["placements/fixture-tp"]
    placement["envelope"]["flops_per_item"] = q(280, "GFLOP")
    for side in (placement["reference"], *placement["candidates"]):
        side["useful"]["compute_rate"] = q(1000, "TFLOP/s")
    kb = make_kb(records)
    low = analyze_placement(kb.get("placements/fixture-tp"), kb)
    assert low.sides[0].ledger.row("useful").value == Fraction(175, 10**4)
    high = analyze_placement(kb.get("placements/fixture-tp"), kb, {"batch": "512"})
    assert high.sides[0].ledger.row("useful").value == Fraction(3584, 10**5)
    del placement["candidates"][0]["useful"]["compute_rate"]
    kb = make_kb(records)
    gaps = analyze_placement(kb.get("placements/fixture-tp"), kb).gaps
    assert [g.pointer for g in gaps] == ["/candidates/0/useful"]


def test_receipt_must_share_an_accelerator_when_both_name_one(records: dict) -> None:
    from tests.ledger.ledger_fixtures import make_kb

    records["receipts/fixture-ar"]["hardware"] = ["hardware/gpu-a"]
    receipts = receipt_views(make_kb(records))
    args = (receipts, "interconnects/fixture-fast", "all-reduce", 4, Fraction(128_000))
    assert receipt_bandwidth(*args) is not None  # the option names no accelerator
    assert receipt_bandwidth(*args, frozenset({"hardware/gpu-a"})) is not None
    assert receipt_bandwidth(*args, frozenset({"hardware/gpu-b"})) is None
