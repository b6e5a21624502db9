"""A small, clean sample of the shipped records: what per-push tests run on instead of the tree.

A cold `kb validate` of the shipped records costs ~13 CPU-s (every claim of 29 flop
classes derived with SymPy); many tests only need *a* real tree that exercises every
kind of check. The sample is the shipped records reachable by reference from
`ROOTS`: one flop class with claims of every kind and a derivation
(flops/decode-kv-cache-read), and one placement on H100 and H200 nodes, with every
record they cite (sources, receipts, hardware, interconnects, models, strategies),
copied unchanged: ~80 records whose cold check costs ~1 CPU-s.
tests/project/test_sample.py holds it clean, closed under references, and covering
every claim kind, a derivation, a placement and every kind the roots reach.

Tests that run on the sample per push say why the sample holds their property for
the whole tree, and run on the shipped records too when `KB_FULL=1` (`full()`).
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from tests.conftest import SHIPPED_RECORDS

ROOTS = (
    "flops/decode-kv-cache-read",
    "placements/llama-3.1-405b-one-h200-node-vs-two-h100-nodes",
)


def full() -> bool:
    """True when `KB_FULL` asks for the whole-tree versions of sampled tests."""
    return os.environ.get("KB_FULL", "") not in ("", "0")


@functools.cache
def sample_files(roots: tuple[str, ...] = ROOTS) -> tuple[Path, ...]:
    """The shipped files of the sample (relative to records/), found by kb's own references.

    Another test's sample passes its own `roots` (tests/site/sample_site.py); the closure
    is the same."""
    from kb.api import open_kb

    kb = open_kb(SHIPPED_RECORDS)
    cited: dict[str, set[str]] = {}
    for reference in kb.references:
        cited.setdefault(reference.source_id, set()).add(reference.target.split("#")[0])
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        record_id = todo.pop()
        if record_id in seen or kb.get(record_id) is None:
            continue
        seen.add(record_id)
        todo.extend(cited.get(record_id, ()))
    files = []
    for record_id in seen:
        record = kb.get(record_id)
        assert record is not None
        files.append(Path(record.path).resolve().relative_to(SHIPPED_RECORDS.resolve()))
    return tuple(sorted(files))


def sample_copy(target: Path, roots: tuple[str, ...] = ROOTS) -> Path:
    """Copy the sample of `roots` to `target` (a records folder, made); returns `target`."""
    for relative in sample_files(roots):
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(SHIPPED_RECORDS / relative, target / relative)
    return target


def copy_with_broken_h100(tmp_path: Path) -> Path:
    """tests/conftest.py's `shipped_copy_with_broken_h100` on the sample per push.

    The same two edits to the H100 (off schema: SC001; one source gone: RF001), which
    the sample holds with every record that cites it; the shipped tree with `KB_FULL=1`.
    Returns the copy's records folder, `tmp_path / "records"`.
    """
    from tests.conftest import shipped_copy_with_broken_h100

    if full():
        return shipped_copy_with_broken_h100(tmp_path)
    records = sample_copy(tmp_path / "records")
    broken = records / "hardware" / "nvidia-h100-sxm.yaml"
    text = broken.read_text(encoding="utf-8")
    assert "basis: vendor-spec" in text and "source: sources/" in text
    broken.write_text(
        text.replace("basis: vendor-spec", "basis: nope", 1).replace(
            "source: sources/", "source: sources/gone-", 1
        ),
        encoding="utf-8",
    )
    return records
