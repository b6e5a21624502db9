"""Invariants of the ledger arithmetic, over generated inputs (Hypothesis)."""

from __future__ import annotations

import os
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.ledger.inputs import OVERHEADS, DeviceGroup, Envelope, OptionSpec, Overhead
from kb.ledger.ledger import compute_ledger, exposed_time
from kb.ledger.quantities import Figure
from kb.ledger.transfers import TransferSpec
from kb.schema import load_schemas

# The collective patterns a placement's transfer may name: its schema's enum.
TRANSFER = load_schemas()["placement.schema.json"]["$defs"]["transfer"]
PATTERNS = TRANSFER["properties"]["pattern"]["enum"]
# Fixed examples (tests/conftest.py's profile derandomizes); `KB_FUZZ_EXAMPLES` sets the count.
EXAMPLES = int(os.environ.get("KB_FUZZ_EXAMPLES", "0"))

positive = st.fractions(min_value=Fraction(1, 10**9), max_value=Fraction(10**6))
non_negative = st.fractions(min_value=Fraction(0), max_value=Fraction(10**3))


def fig(value: Fraction, dim: str, basis: str = "estimated") -> Figure:
    return Figure(value, dim, basis, "test")


@st.composite
def transfers(draw: st.DrawFn) -> TransferSpec:
    return TransferSpec(
        name=f"t{draw(st.integers(0, 99))}",
        pattern=draw(st.sampled_from(PATTERNS)),
        link=draw(st.sampled_from(["interconnects/a", "interconnects/b"])),
        ranks=draw(st.integers(2, 64)),
        count=draw(st.integers(1, 200)),
        message_size=fig(draw(positive), "B"),
        scales_with_batch=draw(st.booleans()),
        latency=fig(draw(non_negative) / 10**6, "s"),
        bandwidth=fig(draw(positive) * 10**6, "B/s"),
        receipts=(),
        overlap=fig(draw(non_negative) / 10**3, "s") if draw(st.booleans()) else None,
        pointer="/t",
    )


@st.composite
def options(draw: st.DrawFn) -> OptionSpec:
    entered = draw(st.lists(st.sampled_from(OVERHEADS), unique=True))
    return OptionSpec(
        name="o",
        pointer="/o",
        devices=(DeviceGroup("d", 1, fig(Fraction(10**12), "B"), None, "/d"),),
        state_shards=1,
        replicated=None,
        useful_rate=fig(draw(positive) * 10**9, "B/s"),
        useful_parallel=draw(st.integers(1, 16)),
        transfers=tuple(draw(st.lists(transfers(), max_size=4))),
        overheads={n: Overhead(fig(draw(non_negative) / 10**3, "s"), "") for n in entered},
    )


envelopes = st.builds(
    lambda work, batch: Envelope(
        "m", "bf16", "same", Fraction(batch), fig(work, "B"), fig(work, "B"), None
    ),
    positive.map(lambda x: x * 10**9),
    st.integers(1, 512),
)


@settings(deadline=None)
@given(non_negative, non_negative)
def test_exposed_is_never_negative_nor_above_raw(raw: Fraction, overlap: Fraction) -> None:
    exposed = exposed_time(raw, overlap)
    assert 0 <= exposed <= raw


@settings(max_examples=EXAMPLES or 50, deadline=None)
@given(envelopes, options())
def test_total_is_the_sum_of_its_rows(envelope: Envelope, option: OptionSpec) -> None:
    ledger = compute_ledger(envelope, option)
    assert ledger.total == sum(row.value for row in ledger.rows)
    assert all(row.value >= 0 for row in ledger.rows)
    for cost in ledger.transfers:
        assert 0 <= cost.exposed <= cost.raw


@settings(max_examples=EXAMPLES or 50, deadline=None)
@given(envelopes, options())
def test_hidden_communication_never_exceeds_the_useful_compute(
    envelope: Envelope, option: OptionSpec
) -> None:
    ledger = compute_ledger(envelope, option)
    hidden = sum(c.raw - c.exposed for c in ledger.transfers)
    assert hidden <= ledger.row("useful").value


@settings(max_examples=EXAMPLES or 50, deadline=None)
@given(envelopes, options(), st.integers(0, 3), non_negative)
def test_more_overlap_never_increases_total(
    envelope: Envelope, option: OptionSpec, which: int, extra: Fraction
) -> None:
    if not option.transfers:
        return
    index = which % len(option.transfers)
    transfer = option.transfers[index]
    before = transfer.overlap.value if transfer.overlap else Fraction(0)
    more = TransferSpec(**{**transfer.__dict__, "overlap": fig(before + extra / 10**3, "s")})
    changed = OptionSpec(
        **{
            **option.__dict__,
            "transfers": tuple(more if i == index else t for i, t in enumerate(option.transfers)),
        }
    )
    assert compute_ledger(envelope, changed).total <= compute_ledger(envelope, option).total


def test_overlap_beyond_a_transfers_raw_time_is_left_for_the_next_one() -> None:
    """Two transfers of 1 ms raw each, useful 10 ms: the first claims 5 ms but hides only
    1 ms, so 9 ms remain and the second (claiming 1 ms) is fully hidden: exposed 0."""

    def transfer(overlap_ms: int) -> TransferSpec:
        return TransferSpec(
            "t",
            "point-to-point",
            "interconnects/a",
            2,
            1,
            fig(Fraction(10**6), "B"),
            False,
            fig(Fraction(0), "s"),
            fig(Fraction(10**9), "B/s"),
            (),
            fig(Fraction(overlap_ms, 1000), "s"),
            "/t",
        )

    option = OptionSpec(
        "o", "/o", (), 1, None, fig(Fraction(10**9), "B/s"), 1, (transfer(5), transfer(1)), {}
    )
    envelope = Envelope(
        "m", "bf16", "same", Fraction(1), fig(Fraction(10**7), "B"), fig(Fraction(10**7), "B"), None
    )
    ledger = compute_ledger(envelope, option)
    assert [c.raw for c in ledger.transfers] == [Fraction(1, 1000)] * 2
    assert ledger.row("exposed").value == 0
    assert ledger.total == Fraction(1, 100)
