"""A collective is priced from a receipt row of its own size, or the two rows that bracket it.

The ledger prices a transfer from a receipt's measured curve: the row of exactly the
transfer's size S (times the batch when it scales with it), or linear interpolation in
time between the two rows of one curve that bracket S; a curve is the rows of one receipt
that share `gpus`, `algorithm` and `cuda_graphs` (kb/ledger/curves.py). This rule reports:

- a transfer that names a `receipt` which cannot price it that way (another link or
  pattern, no row of its rank count and algorithm, or S outside the measured range);
- a receipt curve with two rows of one message size, which would make its time at that
  size ambiguous (two implementations or two conditions written as one curve);
- a flop-class claim that binds (in `bind`, `change` or a prediction's `measured`) the
  `latency`, `bus_bandwidth` or `algorithm_bandwidth` of a collective receipt's row
  without naming the message size it is for: the same claim must bind a size equal to
  that row's (`n: receipts/x#results.3.message_size`, or any byte quantity of that
  value), or a size S that this row and another bound row of its curve bracket as the
  nearest pair (interpolation, as the ledger prices). A row that states no message size
  (a "peak" or "large message" figure) cannot be bound for its time or bandwidth at all.

Why: a collective's time depends on its size far from linearly (an all-reduce of 512 KiB
and one of 1 MiB take about the same time on NVLS, so a bandwidth measured at one prices
the other 2x wrong), and ring, tree, NVLS and custom one-shot/two-shot kernels differ
several-fold at decode sizes. A row of another size, or of another algorithm, is not a
measurement of this transfer.

Bad:

    transfers:
      - {name: tp, pattern: all-reduce, link: interconnects/nvlink-4, ranks: 8, count: 252,
         message_size: {value: 32768, unit: B, basis: derived, source: sources/x},
         scales_with_batch: true, algorithm: nvls,
         receipt: receipts/only-1-mib-and-8-gib}     # batch 16: S = 512 KiB, no bracket

Bad (a claim):

    bind:
      alpha: receipts/sglang-custom-all-reduce-h100-latency#results.0.latency   # 512 B

Bad (a bandwidth measured at 8 GiB pricing 16 GB of gradients, or a figure of no size):

    bind:
      n: {value: 16, unit: GB, basis: derived, source: sources/x}
      W: receipts/azure-nd-h100-v5-nccl-all-reduce#results.3.bus_bandwidth    # 8 GiB
      W_ring: receipts/nccl-maintainer-h100-nvlink-busbw#results.0.bus_bandwidth  # no size

Good (a claim):

    bind:
      alpha: receipts/sglang-custom-all-reduce-h100-latency#results.0.latency
      n: receipts/sglang-custom-all-reduce-h100-latency#results.0.message_size

Good:

    transfers:
      - {name: tp, pattern: all-reduce, link: interconnects/nvlink-4, ranks: 8, count: 252,
         message_size: {value: 32768, unit: B, basis: derived, source: sources/x},
         scales_with_batch: true, algorithm: nvls,
         receipt: receipts/azure-nd-h100-v5-nccl-all-reduce}   # has a 512 KiB NVLS row
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import TYPE_CHECKING

from kb.findings import Finding, Severity, pointer_join
from kb.kinds import views
from kb.model import KnowledgeBase, Record
from kb.rules._base import found

if TYPE_CHECKING:  # types only: a run without placements does not import their module
    from kb.kinds.placement import Placement, Transfer

READS = "ledger"
CODE = "LG009"
NAME = "collective-priced-off-size"
SEVERITY = Severity.ERROR
HINT = "price the collective with a receipt row of the size the claim prices"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """Each receipt, placement and flop class; one that fails its schema is not checked.

    Receipts and placements are read through their views: one that fails its schema
    has its SC001 finding and prices nothing. Every finding is on the record checked,
    so a partial run (kb.incremental) checks only the records in its focus.
    """
    from kb.ledger.curves import duplicate_sizes
    from kb.rules._collective_claims import check_claims

    checked = views(kb)
    for record in filter(kb.in_focus, kb.of_kind("receipt")):
        receipt = checked.receipt(record)
        for first, second in duplicate_sizes(receipt) if receipt else ():
            yield found(
                CODE,
                SEVERITY,
                record.path,
                f"/results/{second}/message_size",
                f"rows {first} and {second} share gpus, algorithm, cuda_graphs and "
                "message size: the curve's time at that size is ambiguous",
                "state the condition that differs (algorithm, cuda_graphs, gpus), "
                "or keep one implementation per receipt",
            )
    for record in filter(kb.in_focus, kb.of_kind("placement")):
        placement = checked.placement(record)
        if placement is not None:
            yield from _placement(kb, record, placement)
    for flop in filter(kb.in_focus, kb.of_kind("flop_class")):
        yield from check_claims(kb, flop, CODE, SEVERITY)


def _placement(kb: KnowledgeBase, record: Record, placement: Placement) -> Iterator[Finding]:
    batch = Fraction(placement.envelope.batch)
    pointers = ["/reference", *(f"/candidates/{i}" for i in range(len(placement.candidates)))]
    for pointer, option in zip(pointers, placement.options, strict=True):
        hardware = frozenset(d.hardware for d in option.devices if d.hardware is not None)
        for index, transfer in enumerate(option.transfers):
            message = _unpriced(kb, transfer, batch, hardware) if transfer.receipt else ""
            if message:
                yield found(
                    CODE,
                    SEVERITY,
                    record.path,
                    pointer_join(pointer, "transfers", index, "receipt"),
                    message,
                    "name a receipt with a row of this size (or rows on both "
                    "sides of it) for this rank count and algorithm, or drop "
                    "`receipt` and let the ledger price it by line rate",
                )


def _unpriced(
    kb: KnowledgeBase, transfer: Transfer, batch: Fraction, hardware: frozenset[str]
) -> str:
    """Why the named receipt cannot price this transfer, or '' when it can."""
    from kb.ledger.quantities import QuantityError, figure
    from kb.ledger.transfers import Conditions, hardware_matches, priced_by_receipts

    record = kb.get(str(transfer.receipt))
    if record is None or record.kind != "receipt":
        return ""  # RF001/RF002 report it
    receipt = views(kb).receipt(record)
    if receipt is None:
        return ""  # it fails its schema: SC001 reports it, LG004 names it on the placement
    try:
        size = figure(transfer.message_size, receipt.id).value
    except QuantityError:
        return ""  # LG004 reports it
    size *= batch if transfer.scales_with_batch else 1
    when = Conditions(
        transfer.pattern, transfer.ranks, hardware, transfer.algorithm, transfer.cuda_graphs
    )
    measured, why = priced_by_receipts([receipt], transfer.link, size, when)
    if measured:
        return ""
    if receipt.interconnect != transfer.link or receipt.pattern != when.pattern:
        why = (
            f"it measures {receipt.pattern} on {receipt.interconnect}, "
            f"not {when.pattern} on {transfer.link}"
        )
    elif not hardware_matches(receipt, hardware):
        why = "it was measured on other accelerators than this option's"
    elif why == "no matching receipt curve":
        why = (
            f"it has no sized row for {transfer.ranks} ranks with algorithm "
            f"{when.algorithm or '(none stated)'}"
        )
    return f"{receipt.id} cannot price this transfer (S = {size} B): {why}"
