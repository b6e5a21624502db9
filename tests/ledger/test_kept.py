"""The end-to-end rows kept between runs (kb.ledger.kept) are the rows a cold pricing gives.

- On the shipped records: the kept rows (written to a store and read back from disk, as
  a second run reads them) equal `evaluate_all`'s, byte for byte in the JSON of every row
  and of the summary; `kb list --end-to-end --format json` run again answers from the store
  without pricing a row, and prints the cold rows' document.
- On a small tree (the shipped records with one end-to-end receipt): a second run answers
  from the store; an edit to the receipt, to kb/data/end-to-end.json or to kb's code
  (its fingerprint) prices the rows again and gives the cold rows of the edited input; a
  damaged entry is a miss, priced afresh; a store that cannot be written still answers.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kb import fingerprint, resources
from kb.ledger import endtoend, kept
from kb.ledger.endtoend import RowResult, evaluate_all, report_row, summary
from kb.model import KnowledgeBase
from kb.store import shard_file
from tests.conftest import REPO, SHIPPED_RECORDS
from tests.inprocess import kb_in_process
from tests.kinds.helpers import checked_kb
from tests.shipped_outputs import ONE_WORKER, end_to_end_results

RECEIPT = "receipts/nemo-llama-2-7b-h100-tp-latency"  # priced rows, validated and not


def as_json(rows: list[RowResult] | tuple[RowResult, ...]) -> list[str]:
    """Every row as the report prints it (exact values included), one JSON text each."""
    return [json.dumps(report_row(r), sort_keys=True, ensure_ascii=False) for r in rows]


@ONE_WORKER
def test_the_kept_rows_are_the_cold_rows_on_the_shipped_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kb.api import open_kb
    from kb.checker import schema_stage

    cold = end_to_end_results()  # evaluate_all, cold
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path))
    kb = open_kb(SHIPPED_RECORDS, with_references=False)
    schema_stage(kb)
    assert kept.stored(kb) is None
    kept.keep(kb, cold)
    assert (tmp_path / shard_file(kept.STORE, 0, 1)).is_file()
    found = kept.stored(kb)  # read back from the shard file, as a second run reads it
    assert found is not None and len(found) == len(cold) > 700
    assert as_json(found) == as_json(cold)
    assert found == list(cold)  # every field but `outcome` (not kept)
    assert json.dumps(summary(found)) == json.dumps(summary(list(cold)))
    assert any(r.layouts for r in found) and any(r.predicted is not None for r in found)


@ONE_WORKER
def test_the_command_run_again_prints_the_cold_rows_without_pricing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`kb list --end-to-end` at the project folder after a run that kept the rows."""
    cold = list(end_to_end_results())  # and kept in the project's store

    def refused(kb: KnowledgeBase) -> list[RowResult]:
        raise AssertionError("priced again")

    monkeypatch.setattr(kept, "evaluate_all", refused)
    done = kb_in_process(["list", "--end-to-end", "--format", "json"], cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    document = {"rows": [report_row(r) for r in cold], "summary": summary(cold)}
    assert done.stdout == json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# ---- a small tree: one end-to-end receipt, every other record ----------------------------


@pytest.fixture(scope="module")
def small(shipped: KnowledgeBase) -> dict[str, dict[str, Any]]:
    """The shipped records' data with no end-to-end receipt but RECEIPT (id -> data)."""
    return {
        r.id: copy.deepcopy(dict(r.data))
        for r in shipped
        if r.id == RECEIPT or r.kind != "receipt" or r.get("pattern") != "end-to-end"
    }


@pytest.fixture
def priced(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """The store in a folder of the test's own; how many times the rows were priced."""
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[int] = []

    def counted(kb: KnowledgeBase) -> list[RowResult]:
        calls.append(1)
        return evaluate_all(kb)

    monkeypatch.setattr(kept, "evaluate_all", counted)
    return calls


def test_a_second_run_answers_from_the_store(small: dict[str, Any], priced: list[int]) -> None:
    first = kept.end_to_end_rows(checked_kb(small))
    assert len(priced) == 1 and any(r.predicted is not None for r in first)
    again = kept.end_to_end_rows(checked_kb(small))  # another run's knowledge base
    assert len(priced) == 1
    assert as_json(again) == as_json(first) and again == first


def test_an_edited_receipt_is_priced_again(small: dict[str, Any], priced: list[int]) -> None:
    before = kept.end_to_end_rows(checked_kb(small))
    edited = copy.deepcopy(small)
    row = next(i for i, r in enumerate(before) if r.measured is not None and r.index == i)
    value = edited[RECEIPT]["results"][row]["value"]
    value["value"] = value["value"] * 2  # the measurement doubled: another error, same price
    kb = checked_kb(edited)
    found = kept.end_to_end_rows(kb)
    assert len(priced) == 2
    assert as_json(found) == as_json(evaluate_all(kb)) != as_json(before)
    assert found[row].error != before[row].error


@pytest.fixture
def declaration_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """kb/data/end-to-end.json copied to a path the test edits; its caches cleared around it."""
    path = tmp_path / "end-to-end.json"
    path.write_bytes(resources.end_to_end_path().read_bytes())
    monkeypatch.setattr(resources, "end_to_end_path", lambda: path)
    resources._end_to_end_document.cache_clear()
    endtoend.declaration.cache_clear()
    yield path
    resources._end_to_end_document.cache_clear()
    endtoend.declaration.cache_clear()


def test_an_edited_declaration_is_priced_again(
    small: dict[str, Any], priced: list[int], declaration_file: Path
) -> None:
    kb = checked_kb(small)
    before = kept.end_to_end_rows(kb)
    document = json.loads(declaration_file.read_text(encoding="utf-8"))
    document["band"] = "1/100"  # a band of 1%: rows within 25% are misses now
    declaration_file.write_text(json.dumps(document), encoding="utf-8")
    resources._end_to_end_document.cache_clear()  # a new process reads the edited file
    endtoend.declaration.cache_clear()
    found = kept.end_to_end_rows(kb)  # the same run's knowledge base: its memo is stale too
    assert len(priced) == 2
    assert as_json(found) == as_json(evaluate_all(kb)) != as_json(before)


def test_other_code_is_priced_again(
    small: dict[str, Any], priced: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = kept.end_to_end_rows(checked_kb(small))
    monkeypatch.setattr(fingerprint, "code_fingerprint", lambda: "another kb")
    kb = checked_kb(small)
    found = kept.end_to_end_rows(kb)
    assert len(priced) == 2
    assert as_json(found) == as_json(before) == as_json(evaluate_all(kb))


@pytest.mark.parametrize("at", [0, -1])  # the shard's magic, the entry's last byte
def test_a_damaged_entry_is_a_miss(
    small: dict[str, Any], priced: list[int], tmp_path: Path, at: int
) -> None:
    before = kept.end_to_end_rows(checked_kb(small))
    shard = tmp_path / "cache" / shard_file(kept.STORE, 0, 1)
    data = bytearray(shard.read_bytes())
    data[at] ^= 0xFF
    shard.write_bytes(bytes(data))
    kb = checked_kb(small)
    assert kept.stored(kb) is None
    found = kept.end_to_end_rows(kb)
    assert len(priced) == 2
    assert as_json(found) == as_json(before) == as_json(evaluate_all(kb))


def test_a_store_that_cannot_be_written_still_answers(
    small: dict[str, Any], priced: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("KB_CACHE_DIR", str(blocker / "cache"))
    kb = checked_kb(small)
    found = kept.end_to_end_rows(kb)
    assert as_json(found) == as_json(evaluate_all(kb))
    assert kept.end_to_end_rows(kb) == found and len(priced) == 1  # this run keeps them
    assert kept.stored(checked_kb(small)) is None  # nothing was written


def test_an_entry_of_another_layout_is_none() -> None:
    assert kept.decoded(("end-to-end-rows/0", ())) is None
    assert kept.decoded((kept.LAYOUT, (("receipts/x",),))) is None
    assert kept.decoded(None) is None
    assert kept.decoded(kept.encoded([])) == []
