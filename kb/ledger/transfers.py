"""One transfer's raw time: `Traw = messages*link_latency + bytes/effective_bandwidth`.

Collective factors follow nccl-tests' bus-bandwidth convention (domain-facts §3.1), so a
receipt's bus bandwidth prices the same bytes it was measured on: a ring all-reduce of S
bytes over n ranks moves 2(n-1)/n*S per rank in 2(n-1) latency steps; reduce-scatter,
all-gather and all-to-all move (n-1)/n*S in n-1 steps; point-to-point moves S in 1.

Effective bandwidth comes from the measured curve of a receipt that matches the link,
the pattern, the accelerators (when both the option and the receipt name them), the rank
count (when the row states one), the algorithm and the CUDA-graphs state: the row of
exactly the transfer's size S, or linear interpolation in time between the two rows that
bracket S (kb/ledger/curves.py; never extrapolated); above the largest row of a curve
whose bus bandwidth has flattened there, that row's bus bandwidth (kb/ledger/saturation.py,
declared `collective_saturation`), said as `extended: ...`. The time t(S) so found is turned
into the bus bandwidth that gives it, `factor*S/t(S)`, so the rest of the ledger (and the
break-even solver) prices it as `bytes/bandwidth`. A receipt's time is measured end to
end, so it already contains the per-message latency: the latency term is then zero,
never counted a second time. With no row of size S and no bracketing pair the link
record's line rate and a stated latency are used, labelled an estimate, and the transfer
says why (`pricing`); an all-reduce whose group spans nodes (`rails`) runs there over every
NIC of a node (kb.ledger.rails, declared `cross_node_rails`).

Links and receipts are read through their typed views (kb.kinds): a receipt that
fails its schema prices nothing, and a transfer it might have priced (it names the
transfer's link and pattern, or the transfer pins it) is a gap naming it
(kb.ledger.inputs says why).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kb.findings import pointer_join
from kb.kinds import views
from kb.kinds.interconnect import Interconnect
from kb.kinds.placement import Transfer
from kb.kinds.receipt import Receipt
from kb.ledger.curves import (
    Point,
    Pricing,
    best,
    curves,
    measured_range,
    outliers,
    price,
)
from kb.ledger.quantities import Figure, QuantityError, figure
from kb.ledger.rails import MEASURED, Rings, over_rails
from kb.ledger.saturation import extension
from kb.model import KnowledgeBase
from kb.run import Kept

if TYPE_CHECKING:  # inputs.py imports this module; the reader is only a type here
    from kb.ledger.reader import InputReader


def collective_steps(pattern: str, ranks: int) -> int:
    """Latency steps (messages) of one collective over `ranks` ranks."""
    if pattern == "point-to-point":
        return 1
    return 2 * (ranks - 1) if pattern == "all-reduce" else ranks - 1


def bus_factor(pattern: str, ranks: int) -> Fraction:
    """Bytes moved per rank, as a multiple of the collective's buffer size S."""
    if pattern == "point-to-point":
        return Fraction(1)
    if ranks < 1:  # schema-invalid (SC001 reports it); the ledger rules must not crash on it
        return Fraction(0)
    base = Fraction(ranks - 1, ranks)
    return 2 * base if pattern == "all-reduce" else base


LINE_RATE = "line rate of "  # how a transfer priced at its link's line rate begins `pricing`


@dataclass(frozen=True)
class TransferSpec:
    """A resolved transfer: what moves, over which link, how often, and what hides it."""

    name: str
    pattern: str
    link: str
    ranks: int
    count: int
    message_size: Figure
    scales_with_batch: bool
    latency: Figure
    bandwidth: Figure
    receipts: tuple[str, ...]  # non-empty: bandwidth measured end to end, latency inside it
    overlap: Figure | None
    pointer: str
    strategy: str = ""
    pricing: str = ""  # which rows priced it, or why the line rate did
    rings: Rings | None = None  # over every NIC of a node: `bandwidth` is min(c_r*port, intra)


def line_rate(link: Interconnect) -> Figure | None:
    """Return the link's per-direction line rate: per device if stated, else per link."""
    found = link.line_rate()
    if found is None:
        return None
    key, node = found
    try:
        return figure(node, f"{link.id}#bandwidth.{key}")
    except QuantityError:
        return None


@dataclass(frozen=True)
class Conditions:
    """What a receipt row must share with a transfer to price it."""

    pattern: str
    ranks: int
    hardware: frozenset[str] = frozenset()
    algorithm: str | None = None
    cuda_graphs: bool | None = None


def hardware_matches(receipt: Receipt, hardware: frozenset[str]) -> bool:
    """True unless both the option and the receipt name accelerators and share none."""
    if not hardware or not receipt.hardware:
        return True
    return bool(hardware & set(receipt.hardware))


@dataclass(frozen=True)
class Measured:
    """A transfer priced by a receipt: the effective bus bandwidth and how it was found."""

    bandwidth: Figure
    receipt: str
    pricing: Pricing


def _curve_matches(key: tuple[Any, ...], when: Conditions) -> bool:
    _, gpus, algorithm, graphs = key
    return (
        gpus in (None, when.ranks)
        and algorithm == when.algorithm
        and (when.cuda_graphs is None or graphs == when.cuda_graphs)
    )


def _curves(receipt: Receipt, when: Conditions) -> dict[Any, list[Point]]:
    """The receipt's curves for a transfer of `when`'s pattern and rank count, built once."""
    key = (when.pattern, when.ranks)  # all a row's time depends on besides the row
    found = receipt.curves_memo.get(key)
    if found is None:
        factor_of = lambda gpus: bus_factor(when.pattern, gpus or when.ranks)  # noqa: E731
        found = receipt.curves_memo[key] = curves(receipt, factor_of)
    return found


def priced_by_receipts(
    receipts: Iterable[Receipt], link: str, size: Fraction, when: Conditions
) -> tuple[Measured | None, str]:
    """Price size S from the matching receipts' curves; else None and the reason."""
    found: list[Pricing] = []
    ranges: list[str] = []
    for receipt in receipts:
        if receipt.interconnect != link or receipt.pattern != when.pattern:
            continue
        if not hardware_matches(receipt, when.hardware):
            continue
        skipped = receipt.curves_memo.get("outliers")
        if skipped is None:
            skipped = receipt.curves_memo["outliers"] = outliers(receipt)
        for key, points in _curves(receipt, when).items():
            if not _curve_matches(key, when):
                continue
            hit = price(points, size, receipt.id, skipped.get(key, ()))
            if hit is None:
                ranges.append(f"{receipt.id} ({measured_range(points)})")
            else:
                found.append(hit)
    chosen = best(found)
    if chosen is None:
        why = (
            "no matching receipt curve"
            if not ranges
            else f"S = {size} B is outside the measured range of "
            + "; ".join(ranges)
            + " (never extrapolated)"
        )
        return None, why
    bandwidth = bus_factor(when.pattern, when.ranks) * size / chosen.time
    return Measured(
        Figure(bandwidth, "B/s", "measured", chosen.receipt), chosen.receipt, chosen
    ), chosen.describe()


def extended_by_receipts(
    receipts: Iterable[Receipt], link: str, size: Fraction, when: Conditions
) -> tuple[Figure, str, str] | None:
    """Above the saturated curves that cannot price S: bandwidth, receipt and what it says.

    Declared `collective_saturation` (kb.ledger.saturation); the curves are those
    `priced_by_receipts` matches, and it is asked only when none of them priced S.
    """
    matching = []
    for receipt in receipts:
        if receipt.interconnect != link or receipt.pattern != when.pattern:
            continue
        if not hardware_matches(receipt, when.hardware):
            continue
        skipped = receipt.curves_memo.get("outliers") or {}
        for key, points in _curves(receipt, when).items():
            if _curve_matches(key, when):
                matching.append((receipt.id, points, skipped.get(key, ())))
    found = extension(size, matching)
    if found is None:
        return None
    factor = bus_factor(when.pattern, when.ranks)
    bandwidth = Figure(factor * size / found.time, "B/s", "derived", found.receipt)
    return bandwidth, found.receipt, found.describe(factor)


@dataclass(frozen=True)
class ReceiptIndex:
    """The receipts of each (interconnect, pattern), valid ones as views.

    `failing` holds the ids of the receipts that fail their schema but name that
    link and pattern.
    """

    valid: dict[tuple[str, str], list[Receipt]] = field(default_factory=dict)
    failing: dict[tuple[str, str], list[str]] = field(default_factory=dict)


RECEIPTS: Kept[ReceiptIndex] = Kept("receipts index")  # receipt_index, once per run


def receipt_index(kb: KnowledgeBase) -> ReceiptIndex:
    """The receipts by (interconnect, pattern), indexed once per knowledge base.

    Scanning every receipt for every transfer made the ledger rules quadratic
    (10,000 records: ~30 s); a frozen knowledge base keeps the index in its run
    context (RECEIPTS), an unfrozen one builds it per call. A receipt
    that fails its schema is filed under the link and pattern it names when both
    are text (compared, never trusted: it prices nothing).
    """
    found = kb.run.kept(RECEIPTS) if kb.frozen else None
    if found is not None:
        return found
    index = ReceiptIndex()
    checked = views(kb)
    for record in kb.of_kind("receipt"):
        view = checked.receipt(record)
        if view is not None:
            if view.interconnect is not None:
                index.valid.setdefault((view.interconnect, view.pattern), []).append(view)
            continue
        key = (record.get("interconnect"), record.get("pattern"))
        if isinstance(key[0], str) and isinstance(key[1], str):
            index.failing.setdefault(key, []).append(record.id)
    if kb.frozen:
        kb.run.keep(RECEIPTS, index)
    return index


def receipts_on(kb: KnowledgeBase, link: str, pattern: str) -> list[Receipt]:
    """The views of the schema-valid receipts of one (interconnect, pattern), in id order."""
    return list(receipt_index(kb).valid.get((link, pattern), ()))


def failing_on(kb: KnowledgeBase, link: str, pattern: str) -> list[str]:
    """The ids of the receipts that name (interconnect, pattern) but fail their schema."""
    return list(receipt_index(kb).failing.get((link, pattern), ()))


def _latency(
    res: InputReader, transfer: Transfer, link: Interconnect, pointer: str
) -> Figure | None:
    """Return the per-message latency: the transfer's, else the link record's; never assumed."""
    latency_node = transfer.link_latency if transfer.link_latency is not None else link.latency
    if latency_node is None:
        res.gap(
            pointer_join(pointer, "link_latency"),
            f"no link latency: neither the transfer nor {link.id} states one",
        )
        return None
    return res.quantity(latency_node, pointer_join(pointer, "link_latency"), "s", "link latency")


def _link(res: InputReader, transfer: Transfer, pointer: str) -> Interconnect | None:
    """The view of the transfer's link; a gap when it is no interconnect kb can compute from."""
    where = pointer_join(pointer, "link")
    record = res.kb.get(transfer.link)
    if record is None or record.kind != "interconnect":
        if record is None and res.kb.exists(transfer.link):  # in the tree, unreadable
            res.blocked(where, transfer.link, "the transfer's link")
        else:
            res.gap(where, f"link {transfer.link!r} is not an interconnect record")
        return None
    view = res.views.interconnect(record)
    if view is None:
        res.blocked(where, transfer.link, "the transfer's link")
    return view


def _receipts(res: InputReader, transfer: Transfer, pointer: str) -> list[Receipt] | None:
    """The receipts that may price the transfer; None (and a gap) when one of them is broken."""
    receipts = receipts_on(res.kb, transfer.link, transfer.pattern)
    failing = failing_on(res.kb, transfer.link, transfer.pattern)
    if transfer.receipt is not None:
        receipts = [r for r in receipts if r.id == transfer.receipt]
        failing = [transfer.receipt] if res.unusable(transfer.receipt) else []
    if failing:
        where = pointer_join(pointer, "receipt") if transfer.receipt else pointer
        res.blocked(where, failing[0], "pricing this transfer")
        return None
    return receipts


def resolve_transfer(
    res: InputReader,
    transfer: Transfer,
    pointer: str,
    batch: Fraction,
    hardware: frozenset[str] = frozenset(),
) -> TransferSpec | None:
    """Resolve one transfer of a schema-valid placement; gaps go to the reader."""
    link = _link(res, transfer, pointer)
    if link is None:
        return None
    size = res.quantity(
        transfer.message_size, pointer_join(pointer, "message_size"), "B", "message size"
    )
    if size is None:
        return None
    nominal = size.value * (batch if transfer.scales_with_batch else 1)
    when = Conditions(
        transfer.pattern, transfer.ranks, hardware, transfer.algorithm, transfer.cuda_graphs
    )
    receipts = _receipts(res, transfer, pointer)
    if receipts is None:
        return None
    measured, pricing = priced_by_receipts(receipts, link.id, nominal, when)
    rings = None
    if measured:
        bandwidth: Figure | None = measured.bandwidth
        latency: Figure | None = Figure(Fraction(0), "s", "measured", measured.receipt)
        pricing = f"{MEASURED}{pricing}"
    elif above := extended_by_receipts(receipts, link.id, nominal, when):
        bandwidth, source, pricing = above  # declared: collective_saturation
        latency = Figure(Fraction(0), "s", "derived", source)  # inside the curve's time
    else:
        bandwidth = line_rate(link)
        latency = _latency(res, transfer, link, pointer)
        pricing = f"{LINE_RATE}{link.id}: {pricing}"
        if transfer.rails is not None and bandwidth is not None:  # declared: cross_node_rails
            bandwidth, said, rings = over_rails(res, transfer.rails, bandwidth, pointer)
            pricing += said
            if bandwidth is None:
                return None
        if latency is not None and latency.basis == "unverified":
            pricing += "; its latency figure is unverified"
    if bandwidth is None or bandwidth.dim != "B/s" or bandwidth.value <= 0:
        res.gap(pointer_join(pointer, "link"), f"{link.id} states no per-direction bandwidth")
        return None
    if latency is None:
        return None
    return TransferSpec(
        name=transfer.name,
        pattern=transfer.pattern,
        link=link.id,
        ranks=transfer.ranks,
        count=transfer.count,
        message_size=size,
        scales_with_batch=transfer.scales_with_batch,
        latency=latency,
        bandwidth=bandwidth,
        receipts=(measured.receipt,) if measured else (),
        overlap=res.optional(transfer.overlap, pointer_join(pointer, "overlap"), "s", "overlap"),
        pointer=pointer,
        strategy=transfer.strategy,
        pricing=pricing,
        rings=rings,
    )
