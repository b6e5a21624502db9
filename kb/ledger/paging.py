"""How a serving engine sizes its KV cache: its share of each device, its block, its workspace.

Read from the engine record's `memory` (flops/kv-cache-capacity-paged states the model);
the workload names the engine, feasibility counts the reserve and whole blocks. A module
of its own below the workload and feasibility, so that both can name it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from kb.findings import pointer_join

if TYPE_CHECKING:
    from kb.ledger.reader import InputReader


GIB = 2**30


def gib(value: Fraction) -> str:
    """Bytes as GiB with two decimals, the unit devices report their memory in."""
    return f"{float(value / GIB):.2f} GiB"


@dataclass(frozen=True)
class Paging:
    """How the workload's engine sizes its KV cache: its share of each device and its block."""

    engine: str
    utilization: Fraction | None  # the share of a device the engine uses; the rest is reserved
    block_tokens: int  # tokens per KV-cache block (1: no paging stated)
    workspace: Fraction = Fraction(0)  # bytes of activations and workspace per device

    def describe(self) -> str:
        """`engines/vllm (0.9 of each device, 16-token blocks, workspace 5.12 GiB)`."""
        share = (
            f"{float(self.utilization):g} of each device"
            if self.utilization is not None
            else "no reserve stated"
        )
        room = f", workspace {gib(self.workspace)}" if self.workspace else ""
        return f"{self.engine} ({share}, {self.block_tokens}-token blocks{room})"

    def reserve(self, capacity: Fraction) -> Fraction:
        """The bytes of a device the engine leaves unused: (1 - utilization) x capacity."""
        return (1 - self.utilization) * capacity if self.utilization is not None else Fraction(0)

    def tokens(self, context: int) -> int:
        """Tokens a sequence of `context` tokens holds: whole blocks."""
        return -(-context // self.block_tokens) * self.block_tokens


def engine_paging(res: InputReader, engine: str | None, pointer: str) -> Paging | None:
    """The engine's `memory` (utilization, block_tokens, workspace) as a Paging; None without one.

    A figure that does not resolve, or a utilization outside (0, 1] or a block that is not a
    whole number of tokens, is a gap at the engine's pointer (rule LG004), never a guess.
    """
    if engine is None:
        return None
    record = res.readable(engine)
    if record is None or record.get("memory") is None:
        return None
    u_node = record.get("memory.utilization")
    b_node = record.get("memory.block_tokens")
    w_node = record.get("memory.workspace")
    if u_node is None and b_node is None and w_node is None:
        return None
    where = pointer_join(pointer, "engine")
    u = res.optional(
        u_node,
        where,
        "1",
        f"{engine}'s memory utilization",
    )
    blk = res.optional(
        b_node,
        where,
        "1",
        f"{engine}'s KV block",
    )
    room = res.optional(
        w_node,
        where,
        "B",
        f"{engine}'s workspace",
    )
    if u is not None and not 0 < u.value <= 1:
        res.gap(where, f"{engine}'s memory utilization is {u.value}, expected a share in (0, 1]")
        return None
    if blk is not None and (blk.value.denominator != 1 or blk.value < 1):
        res.gap(where, f"{engine}'s KV block is {blk.value} tokens, expected a whole number >= 1")
        return None
    return Paging(
        engine,
        None if u is None else u.value,
        1 if blk is None else int(blk.value),
        Fraction(0) if room is None else room.value,
    )
