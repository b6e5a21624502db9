"""What kb computes and prints about the shipped records, once per test process, for many tests.

`kb list --end-to-end` prices every end-to-end receipt row of the shipped records
(~800 rows, ~4-7 CPU-s a run); five tests in tests/ledger and tests/commands read its
rows, its summary line or its JSON schema. Each ran the command (or `evaluate_all`)
again; here each is made once per worker and every test reads it:

- `end_to_end_results()`: `kb.ledger.endtoend.evaluate_all` on the shipped records
  (loaded and schema-checked as `kb list` loads them), the rows as objects: always a
  cold pricing, which it then keeps in the project's store (kb.ledger.kept.keep), as a
  user's first `kb list --end-to-end` would;
- `end_to_end_json()` / `end_to_end_text()`: what `kb list --end-to-end [--format json]`
  prints at the project folder, run in-process as a user types it (tests/inprocess.py:
  the command's own loading, rendering and its kept rows, kb.ledger.kept; tests/test_cli.py's
  subprocess tests hold the real entry point). Each runs after `end_to_end_results()`, so
  the command answers from the store, as a user's second run does, instead of pricing
  every row again (two cold pricings of ~5-7 CPU-s a run less).

The command's output is compared with `end_to_end_results()`, the cold pricing, never
with itself; tests/ledger/test_kept.py holds the kept rows byte-equal to that cold
pricing, and a miss (an edit to anything the rows read) priced afresh. Nothing here is
edited by a test: the results are frozen dataclasses in a tuple, and each JSON call
parses a fresh document.

Every test that reads them carries `ONE_WORKER` (an xdist group, as tests/install's):
under `--dist loadgroup` they run on one worker, so each is made once a run, not once on
each worker (CI ran `evaluate_all` and the JSON run on both).
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import REPO, SHIPPED_RECORDS
from tests.inprocess import kb_in_process

if TYPE_CHECKING:
    from kb.ledger.endtoend import RowResult

ONE_WORKER = pytest.mark.xdist_group(
    "shipped-outputs"
)  # held by tests/project/test_xdist_groups.py


@cache
def end_to_end_results() -> tuple[RowResult, ...]:
    """Every end-to-end row of the shipped records, priced by `evaluate_all`."""
    from kb.api import open_kb
    from kb.checker import schema_stage
    from kb.ledger.endtoend import evaluate_all
    from kb.ledger.kept import keep

    kb = open_kb(SHIPPED_RECORDS, with_references=False)
    schema_stage(kb)  # the composed ledger reads typed views
    cold = tuple(evaluate_all(kb))
    keep(kb, cold)  # what `kb list --end-to-end` at the project folder reads next
    return cold


@cache
def printed(args: tuple[str, ...]) -> str:
    """What `kb ARGS` prints (stdout) at the project folder; it must exit 0."""
    done = kb_in_process(list(args), cwd=REPO)
    assert done.returncode == 0, (args, done.stderr[-2000:])
    return done.stdout


def end_to_end_text() -> str:
    """`kb list --end-to-end` on the shipped records (after the cold pricing: from the store)."""
    end_to_end_results()
    return printed(("list", "--end-to-end"))


def end_to_end_json() -> dict[str, Any]:
    """`kb list --end-to-end --format json` on the shipped records, parsed afresh (after the
    cold pricing: from the store)."""
    end_to_end_results()
    document: dict[str, Any] = json.loads(printed(("list", "--end-to-end", "--format", "json")))
    return document
