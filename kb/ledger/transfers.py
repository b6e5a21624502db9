"""One transfer's raw time: `Traw = messages*link_latency + bytes/effective_bandwidth`.

Collective factors follow nccl-tests' bus-bandwidth convention (domain-facts §3.1), so a
receipt's bus bandwidth prices the same bytes it was measured on: a ring all-reduce of S
bytes over n ranks moves 2(n-1)/n*S per rank in 2(n-1) latency steps; reduce-scatter,
all-gather and all-to-all move (n-1)/n*S in n-1 steps; point-to-point moves S in 1.
Effective bandwidth comes from a receipt that matches the link, the pattern, the
accelerators (when both the option and the receipt name them), the rank count (when the
row states one) and the message size (within a factor of two); else the
link record's line rate, labelled an estimate. A receipt's bandwidth is measured end to
end (nccl-tests: busbw = S*factor/t), so it already contains the per-message latency:
the latency term is then zero, never counted a second time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from kb.findings import pointer_join
from kb.ledger.quantities import Figure, QuantityError, figure
from kb.model import KnowledgeBase, Record

PATTERNS = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "point-to-point")
SIZE_MATCH_FACTOR = 2


def collective_steps(pattern: str, ranks: int) -> int:
    """Latency steps (messages) of one collective over `ranks` ranks."""
    if pattern == "point-to-point":
        return 1
    return 2 * (ranks - 1) if pattern == "all-reduce" else ranks - 1


def bus_factor(pattern: str, ranks: int) -> Fraction:
    """Bytes moved per rank, as a multiple of the collective's buffer size S."""
    if pattern == "point-to-point":
        return Fraction(1)
    base = Fraction(ranks - 1, ranks)
    return 2 * base if pattern == "all-reduce" else base


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


class _Resolver(Protocol):
    def gap(self, pointer: str, message: str) -> None: ...
    def quantity(self, node: Any, pointer: str, dim: str, what: str) -> Figure | None: ...
    def optional(self, node: Any, pointer: str, dim: str, what: str) -> Figure | None: ...
    def count(self, node: Any, pointer: str, what: str, default: int | None = None) -> int: ...


def line_rate(link: Record) -> Figure | None:
    """Return the link's per-direction line rate: per device if stated, else per link."""
    for key in ("per_device", "per_link"):
        node = link.get(f"bandwidth.{key}")
        if node is not None:
            try:
                return figure(node, f"{link.id}#bandwidth.{key}")
            except QuantityError:
                return None
    return None


def _row_bandwidth(row: Any, receipt: Record, index: int) -> Figure | None:
    for key in ("bus_bandwidth", "algorithm_bandwidth"):
        if isinstance(row.get(key), dict):
            try:
                return figure(row[key], receipt.id, f"/results/{index}/{key}")
            except QuantityError:
                return None
    return None


def hardware_matches(receipt: Record, hardware: frozenset[str]) -> bool:
    """True unless both the option and the receipt name accelerators and share none."""
    named = receipt.get("hardware")
    if not hardware or not isinstance(named, list) or not named:
        return True
    return bool(hardware & {str(h) for h in named})


def receipt_bandwidth(receipts: Iterable[Record], link: str, pattern: str, ranks: int,
                      size: Fraction, hardware: frozenset[str] = frozenset(),
                      ) -> tuple[Figure, str] | None:
    """Find the measured bandwidth of the matching receipt row closest in message size."""
    best: tuple[Fraction, str, Figure] | None = None
    for receipt in receipts:
        if receipt.get("interconnect") != link or receipt.get("pattern") != pattern:
            continue
        if not hardware_matches(receipt, hardware):
            continue
        results = receipt.get("results")
        for index, row in enumerate(results if isinstance(results, list) else []):
            if not isinstance(row, dict) or row.get("gpus") not in (None, ranks):
                continue
            try:
                row_size = figure(row.get("message_size") or {}, receipt.id).value
            except QuantityError:
                continue
            ratio = max(row_size / size, size / row_size) if row_size and size else None
            bandwidth = _row_bandwidth(row, receipt, index)
            if ratio is None or ratio > SIZE_MATCH_FACTOR or bandwidth is None \
                    or bandwidth.value <= 0:
                continue
            if best is None or (ratio, receipt.id) < best[:2]:
                best = (ratio, receipt.id, bandwidth)
    return (best[2], best[1]) if best else None


def receipts_on(kb: KnowledgeBase, link: str, pattern: str) -> list[Record]:
    """The receipts of one (interconnect, pattern), in id order, indexed once per knowledge base.

    Scanning every receipt for every transfer made the ledger rules quadratic
    (10,000 records: ~30 s); the index is rebuilt when the receipts change.
    """
    receipts = kb.of_kind("receipt")
    if not isinstance(pattern, str):
        return receipts  # receipt_bandwidth filters; only string keys are indexed
    cached = kb.memo.get("ledger_receipts_index")
    if cached is None or cached[0] != receipts:
        index: dict[tuple[str, str], list[Record]] = {}
        for receipt in receipts:
            key = (receipt.get("interconnect"), receipt.get("pattern"))
            if isinstance(key[0], str) and isinstance(key[1], str):
                index.setdefault(key, []).append(receipt)
        cached = kb.memo["ledger_receipts_index"] = (receipts, index)
    return list(cached[1].get((link, pattern), []))


def _latency(res: _Resolver, node: Any, link: Record, pointer: str) -> Figure | None:
    """Return the per-message latency: the transfer's, else the link record's; never assumed."""
    latency_node = node.get("link_latency", link.get("latency"))
    if latency_node is None:
        res.gap(pointer_join(pointer, "link_latency"),
                f"no link latency: neither the transfer nor {link.id} states one")
        return None
    return res.quantity(latency_node, pointer_join(pointer, "link_latency"), "s",
                        "link latency")


def resolve_transfer(res: _Resolver, kb: KnowledgeBase, node: Any, pointer: str,
                     batch: Fraction, hardware: frozenset[str] = frozenset(),
                     ) -> TransferSpec | None:
    """Resolve one transfer entry; gaps go to the resolver, None when incomplete."""
    if not isinstance(node, dict):
        res.gap(pointer, "transfer is not a mapping")  # the schema names the wrong type
        return None
    pattern = node.get("pattern")
    if pattern not in PATTERNS:
        res.gap(pointer_join(pointer, "pattern"), f"pattern {pattern!r} is not one of "
                f"{', '.join(PATTERNS)}")
        return None
    link_id = str(node.get("link", ""))
    link = kb.get(link_id)
    if link is None or link.kind != "interconnect":
        res.gap(pointer_join(pointer, "link"), f"link {link_id!r} is not an interconnect record")
        return None
    ranks = res.count(node.get("ranks"), pointer_join(pointer, "ranks"), "ranks", 2)
    size = res.quantity(node.get("message_size"), pointer_join(pointer, "message_size"), "B",
                        "message size")
    if size is None:
        return None
    scales = bool(node.get("scales_with_batch", False))
    nominal = size.value * (batch if scales else 1)
    receipts = receipts_on(kb, link_id, pattern)
    measured = receipt_bandwidth(receipts, link_id, pattern, ranks, nominal, hardware)
    if measured:
        bandwidth: Figure | None = measured[0]
        latency: Figure | None = Figure(Fraction(0), "s", "measured", measured[1])
    else:
        bandwidth = line_rate(link)
        latency = _latency(res, node, link, pointer)
    if bandwidth is None or bandwidth.dim != "B/s" or bandwidth.value <= 0:
        res.gap(pointer_join(pointer, "link"), f"{link_id} states no per-direction bandwidth")
        return None
    if latency is None:
        return None
    return TransferSpec(
        name=str(node.get("name", pattern)), pattern=pattern, link=link_id, ranks=ranks,
        count=res.count(node.get("count"), pointer_join(pointer, "count"), "count", 1),
        message_size=size, scales_with_batch=scales, latency=latency, bandwidth=bandwidth,
        receipts=(measured[1],) if measured else (),
        overlap=res.optional(node.get("overlap"), pointer_join(pointer, "overlap"), "s",
                             "overlap"),
        pointer=pointer, strategy=str(node.get("strategy", "")),
    )
