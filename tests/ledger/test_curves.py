"""Collective time by message size: exact rows, interpolation between bracketing rows, no
extrapolation, one algorithm per curve; and every shipped placement priced that way."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.checker import schema_stage
from kb.kinds import views
from kb.kinds.receipt import Receipt
from kb.kinds.receipt import receipt as receipt_view
from kb.ledger.curves import Point, best, curves, price
from kb.ledger.inputs import PlacementSpec, resolve_placement
from kb.ledger.transfers import Conditions, bus_factor, priced_by_receipts
from kb.loader import load_knowledge_base
from kb.model import Record
from tests.ledger.ledger_fixtures import q

LINK = "interconnects/fixture-fast"
ROOT = Path(__file__).resolve().parents[2] / "records"


def receipt(rows: list[dict], rid: str = "receipts/r") -> Receipt:
    """The view of a receipt of these rows (the fields the curves read; built directly)."""
    data = {
        "interconnect": LINK,
        "pattern": "all-reduce",
        "results": rows,
        "evidence_class": "benchmark",
        "engine": {"name": "nccl-tests"},
        "provenance": {},
    }
    return receipt_view(Record(rid, "receipt", f"records/{rid}.yaml", data))


def row(size_kib: int, us: float, gpus: int = 8, **extra: object) -> dict:
    return {
        "gpus": gpus,
        "message_size": q(size_kib, "KiB", "measured"),
        "latency": q(us, "us", "measured"),
        **extra,
    }


NVLS = [
    row(8, 27, algorithm="nvls"),
    row(512, 43, algorithm="nvls"),
    row(1024, 42, algorithm="nvls"),
]


def when(algorithm: str | None = "nvls", ranks: int = 8) -> Conditions:
    return Conditions("all-reduce", ranks, algorithm=algorithm)


def test_a_row_of_the_size_prices_it_exactly() -> None:
    measured, how = priced_by_receipts([receipt(NVLS)], LINK, Fraction(512 * 1024), when())
    assert measured is not None and measured.pricing.time == Fraction(43, 10**6)
    assert measured.bandwidth.value == bus_factor("all-reduce", 8) * 512 * 1024 / Fraction(
        43, 10**6
    )
    assert "row 1" in how


def test_between_two_rows_time_is_linear_in_size() -> None:
    """S = 768 KiB between 512 KiB (43 us) and 1 MiB (42 us): 43 - 1 * 256/512 = 42.5 us."""
    measured, how = priced_by_receipts([receipt(NVLS)], LINK, Fraction(768 * 1024), when())
    assert measured is not None and measured.pricing.time == Fraction(425, 10**7)
    assert "between rows 1" in how and "and 2" in how


def test_outside_the_measured_range_nothing_is_extrapolated() -> None:
    for size in (Fraction(4 * 1024), Fraction(2 * 1024 * 1024)):
        measured, why = priced_by_receipts([receipt(NVLS)], LINK, size, when())
        assert measured is None and "outside the measured range" in why


def test_rows_of_another_algorithm_never_price_a_transfer() -> None:
    for algorithm in ("custom", "ring", None):
        measured, _ = priced_by_receipts(
            [receipt(NVLS)], LINK, Fraction(512 * 1024), when(algorithm)
        )
        assert measured is None
    mixed = receipt([row(8, 27, algorithm="nvls"), row(1024, 10, algorithm="custom")])
    measured, _ = priced_by_receipts([mixed], LINK, Fraction(512 * 1024), when())
    assert measured is None  # one nvls row only: no bracket across algorithms


def test_rank_count_and_cuda_graphs_split_curves() -> None:
    rows = [
        row(8, 5, gpus=4, algorithm="custom", cuda_graphs=False),
        row(1024, 30, gpus=4, algorithm="custom", cuda_graphs=False),
        row(1024, 20, gpus=4, algorithm="custom", cuda_graphs=True),
    ]
    on = Conditions("all-reduce", 4, algorithm="custom", cuda_graphs=True)
    assert priced_by_receipts([receipt(rows)], LINK, Fraction(512 * 1024), on)[0] is None
    off = Conditions("all-reduce", 4, algorithm="custom", cuda_graphs=False)
    measured, _ = priced_by_receipts([receipt(rows)], LINK, Fraction(512 * 1024), off)
    assert measured is not None
    assert (
        priced_by_receipts([receipt(rows)], LINK, Fraction(512 * 1024), when("custom", 8))[0]
        is None
    )


def test_a_curve_with_two_times_at_one_size_is_not_used() -> None:
    rows = [
        row(8, 6, algorithm="custom"),
        row(8, 10, algorithm="custom"),
        row(1024, 34, algorithm="custom"),
    ]
    assert curves(receipt(rows), lambda g: Fraction(7, 4)) == {}


def test_bandwidth_rows_become_times_by_the_nccl_tests_factor() -> None:
    rows = [
        {
            "gpus": 8,
            "algorithm": "nvls",
            "message_size": q(1, "MiB", "measured"),
            "bus_bandwidth": q(43.70, "GB/s", "measured"),
        }
    ]
    (points,) = curves(receipt(rows), lambda g: bus_factor("all-reduce", g)).values()
    assert points[0].time == Fraction(7, 4) * 2**20 / Fraction(43_700_000_000)


def test_an_exact_row_wins_then_the_narrowest_bracket() -> None:
    wide = receipt([row(8, 27, algorithm="nvls"), row(1024, 42, algorithm="nvls")], "receipts/a")
    narrow = receipt(
        [row(256, 40, algorithm="nvls"), row(1024, 42, algorithm="nvls")], "receipts/b"
    )
    exact = receipt([row(512, 44, algorithm="nvls")], "receipts/c")
    size = Fraction(512 * 1024)
    assert priced_by_receipts([wide, narrow], LINK, size, when())[0].receipt == "receipts/b"
    assert priced_by_receipts([wide, narrow, exact], LINK, size, when())[0].receipt == "receipts/c"


sizes = st.lists(st.integers(1, 2**30), min_size=2, max_size=8, unique=True).map(sorted)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes, st.data())
def test_interpolation_stays_between_its_rows_and_hits_them(
    sizes: list[int], data: st.DataObject
) -> None:
    times = data.draw(st.lists(st.integers(1, 10**6), min_size=len(sizes), max_size=len(sizes)))
    points = [
        Point(Fraction(s), Fraction(t, 10**6), i)
        for i, (s, t) in enumerate(zip(sizes, times, strict=True))
    ]
    for p in points:
        hit = price(points, p.size, "r")
        assert hit is not None and hit.time == p.time and not hit.interpolated
    size = Fraction(data.draw(st.integers(sizes[0], sizes[-1])))
    hit = price(points, size, "r")
    assert hit is not None
    low, high = hit.rows[0], hit.rows[-1]
    assert low.size <= size <= high.size
    assert min(low.time, high.time) <= hit.time <= max(low.time, high.time)
    assert not [p for p in points if low.size < p.size < high.size]  # nearest on each side
    assert price(points, Fraction(sizes[-1] + 1), "r") is None
    assert price(points, Fraction(sizes[0]) / 2, "r") is None
    assert best([hit]) is hit


def test_every_shipped_collective_is_priced_from_its_own_size() -> None:
    """The enforcement: every measured transfer of every shipped placement is priced from a
    row of its message size or the two rows that bracket it, of its own rank count and
    algorithm; never from a row of another size."""
    kb, _ = load_knowledge_base(ROOT)
    schema_stage(kb)
    checked = 0
    for record in kb.of_kind("placement"):
        spec = resolve_placement(record, kb)
        assert isinstance(spec, PlacementSpec), record.id
        for option, node in zip(
            spec.options, [record.data["reference"], *record.data["candidates"]], strict=True
        ):
            raws = node.get("transfers", [])
            if "degrees" in node:  # composed: the derived transfers run as the option states
                raws = [
                    node["tp_collective"] if t.pattern == "all-reduce" else node["stage_link"]
                    for t in option.transfers
                ]
            for transfer, raw in zip(option.transfers, raws, strict=True):
                if not transfer.receipts:
                    assert transfer.pricing.startswith("line rate"), transfer.pricing
                    continue
                size = transfer.message_size.value * (
                    spec.envelope.batch if transfer.scales_with_batch else 1
                )
                pricer = views(kb).receipt(kb.get(transfer.receipts[0]))
                assert pricer is not None
                measured, _ = priced_by_receipts(
                    [pricer],
                    transfer.link,
                    size,
                    Conditions(
                        transfer.pattern,
                        transfer.ranks,
                        algorithm=raw.get("algorithm"),
                        cuda_graphs=raw.get("cuda_graphs"),
                    ),
                )
                assert measured is not None
                rows = measured.pricing.rows
                assert rows[0].size == size or rows[0].size < size < rows[-1].size
                results = kb.get(transfer.receipts[0]).data["results"]
                for point in rows:
                    assert results[point.index].get("algorithm") == raw.get("algorithm")
                    assert results[point.index].get("gpus") in (None, transfer.ranks)
                checked += 1
    assert checked >= 4  # 405B (2) and TP4-vs-TP8 (2) are measured
