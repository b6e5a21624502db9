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

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from kb.findings import Finding, Severity, pointer_join
from kb.model import KnowledgeBase, Record
from kb.rules._base import found

READS = "ledger"
CODE = "LG009"
NAME = "collective-priced-off-size"
SEVERITY = Severity.ERROR
HINT = "price the collective with a receipt row of the size the claim prices"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    from kb.ledger.curves import duplicate_sizes
    from kb.rules._collective_claims import check_claims

    for receipt in kb.of_kind("receipt"):
        for first, second in duplicate_sizes(receipt):
            yield found(
                CODE,
                SEVERITY,
                receipt.path,
                f"/results/{second}/message_size",
                f"rows {first} and {second} share gpus, algorithm, cuda_graphs and "
                "message size: the curve's time at that size is ambiguous",
                "state the condition that differs (algorithm, cuda_graphs, gpus), "
                "or keep one implementation per receipt",
            )
    for placement in kb.of_kind("placement"):
        yield from _placement(kb, placement)
    for flop in kb.of_kind("flop_class"):
        yield from check_claims(kb, flop, CODE, SEVERITY)


def _options(placement: Record) -> Iterator[tuple[str, Mapping[str, Any]]]:
    reference = placement.data.get("reference")
    if isinstance(reference, Mapping):
        yield "/reference", reference
    candidates = placement.data.get("candidates")
    for index, option in enumerate(candidates if isinstance(candidates, list) else []):
        if isinstance(option, Mapping):
            yield f"/candidates/{index}", option


def _batch(placement: Record) -> Fraction | None:
    envelope = placement.data.get("envelope")
    batch = envelope.get("batch", 1) if isinstance(envelope, Mapping) else 1
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        return None  # LG004 reports it
    return Fraction(batch)


def _placement(kb: KnowledgeBase, placement: Record) -> Iterator[Finding]:
    batch = _batch(placement)
    if batch is None:
        return
    for pointer, option in _options(placement):
        devices = option.get("devices")
        hardware = frozenset(
            str(d["hardware"])
            for d in (devices if isinstance(devices, list) else [])
            if isinstance(d, Mapping) and isinstance(d.get("hardware"), str)
        )
        transfers = option.get("transfers")
        for index, node in enumerate(transfers if isinstance(transfers, list) else []):
            if isinstance(node, Mapping) and isinstance(node.get("receipt"), str):
                message = _unpriced(kb, node, batch, hardware)
                if message:
                    yield found(
                        CODE,
                        SEVERITY,
                        placement.path,
                        pointer_join(pointer, "transfers", index, "receipt"),
                        message,
                        "name a receipt with a row of this size (or rows on both "
                        "sides of it) for this rank count and algorithm, or drop "
                        "`receipt` and let the ledger price it by line rate",
                    )


def _unpriced(
    kb: KnowledgeBase, node: Mapping[str, Any], batch: Fraction, hardware: frozenset[str]
) -> str:
    """Why the named receipt cannot price this transfer, or '' when it can."""
    from kb.ledger.quantities import QuantityError, figure
    from kb.ledger.transfers import Conditions, hardware_matches, priced_by_receipts

    receipt = kb.get(str(node["receipt"]))
    if receipt is None or receipt.kind != "receipt":
        return ""  # RF001/RF002 report it
    ranks = node.get("ranks")
    try:
        size = figure(node.get("message_size") or {}, receipt.id).value
    except QuantityError:
        return ""  # LG004 reports it
    if (
        not isinstance(ranks, int)
        or isinstance(ranks, bool)
        or not isinstance(node.get("pattern"), str)
    ):
        return ""
    size *= batch if node.get("scales_with_batch") else 1
    when = Conditions(
        str(node["pattern"]),
        ranks,
        hardware,
        node.get("algorithm") if isinstance(node.get("algorithm"), str) else None,
        node.get("cuda_graphs") if isinstance(node.get("cuda_graphs"), bool) else None,
    )
    measured, why = priced_by_receipts([receipt], str(node.get("link", "")), size, when)
    if measured:
        return ""
    if receipt.get("interconnect") != node.get("link") or receipt.get("pattern") != when.pattern:
        why = (
            f"it measures {receipt.get('pattern')} on {receipt.get('interconnect')}, "
            f"not {when.pattern} on {node.get('link')}"
        )
    elif not hardware_matches(receipt, hardware):
        why = "it was measured on other accelerators than this option's"
    elif why == "no matching receipt curve":
        why = (
            f"it has no sized row for {ranks} ranks with algorithm "
            f"{when.algorithm or '(none stated)'}"
        )
    return f"{receipt.id} cannot price this transfer (S = {size} B): {why}"
