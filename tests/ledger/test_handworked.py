"""Ledgers worked out by hand match `kb ledger` exactly (exact fractions from --format json).

The fixture records are in conftest.py; every number below is derived in the docstring
from those records, then compared with what the command prints.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kb.cli import cli
from tests.ledger.ledger_fixtures import fixture_records, write_tree


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_tree(tmp_path, fixture_records()) / "records"


def run(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["ledger", *args, "--root", str(root)])
    return result.exit_code, result.output


def ledger_json(root: Path, placement: str, *extra: str) -> dict[str, Any]:
    code, out = run(root, placement, "--format", "json", *extra)
    assert code == 0, out
    return json.loads(out)


def exact(node: dict[str, Any]) -> Fraction:
    return Fraction(node["exact"])


def rows(doc: dict[str, Any], option: str) -> dict[str, Fraction]:
    ledger = next(x for x in doc["ledgers"] if x["option"] == option)
    return {r["row"]: exact(r["value"]) for r in ledger["rows"]} | {"total": exact(ledger["total"])}


def test_both_fit_two_hosts_against_one_large_host(root: Path) -> None:
    """State 100 GB, useful work 100 GB (one weight read per step), batch 1.

    Reference one-large-host: 1 device, 200 GB, reserve 20 GB, 1 shard -> 100 GB state,
    headroom 200 - 20 - 100 = 80 GB. T_useful = 100 GB / (1 * 500 GB/s) = 0.2 s = T_total.

    Candidate two-hosts: 2 devices of 100 GB, reserve 20 GB, 2 shards -> 50 GB each,
    headroom 100 - 20 - 50 = 30 GB. T_useful = 100 GB / (2 * 500 GB/s) = 0.1 s.
    Transfer: ring all-reduce, n = 2, 160 per step, S = 8 kB x batch 1, fixture-link
    10 GB/s line rate (no receipt: estimate), 5 us latency:
      messages = 160 * 2(n-1) = 320; bytes = 160 * 2(n-1)/n * 8000 = 1,280,000 B
      Traw = 320 * 5 us + 1.28e6 B / 1e10 B/s = 1.6 ms + 0.128 ms = 1.728 ms
      overlap 0.5 ms (within T_useful) -> Texposed = 1.728 - 0.5 = 1.228 ms
    T_sync = 0.2 ms, T_orchestration_or_recovery = 0.1 ms, the other rows 0.
    T_total = 100 + 1.228 + 0.2 + 0.1 = 101.528 ms.
    Efficiency T_r/T_c = 200 / 101.528 = 25000/12691; latency ratio c/r = 12691/25000.
    Cost at 10 USD/h vs 12 USD/h: 10/3600*0.2 = 1/1800 USD; 12/3600*0.101528 USD.
    """
    doc = ledger_json(root, "placements/fixture-both-fit")
    assert [f["feasible"] for f in doc["feasibility"]] == [True, True]
    assert exact(doc["feasibility"][0]["headroom"]) == 80 * 10**9
    assert exact(doc["feasibility"][1]["headroom"]) == 30 * 10**9
    assert rows(doc, "one-large-host")["total"] == Fraction(1, 5)
    cand = rows(doc, "two-hosts")
    assert cand["useful"] == Fraction(1, 10)
    assert cand["exposed"] == Fraction(1228, 10**6)
    assert cand["sync"] == Fraction(2, 10**4)
    assert cand["orchestration_or_recovery"] == Fraction(1, 10**4)
    assert cand["total"] == Fraction(101528, 10**6)
    transfer = next(x for x in doc["ledgers"] if x["option"] == "two-hosts")["transfers"][0]
    assert transfer["messages"] == 320
    assert exact(transfer["bytes"]) == 1_280_000
    assert exact(transfer["raw"]) == Fraction(1728, 10**6)
    assert transfer["provenance"] == "estimated" and transfer["receipts"] == []
    comparison = doc["comparisons"][0]
    assert exact(comparison["efficiency"]) == Fraction(2, 10) / Fraction(101528, 10**6)
    dims = {d["name"]: d for d in comparison["dimensions"]}
    assert exact(dims["latency"]["ratio"]) == Fraction(101528, 10**6) / Fraction(2, 10)
    assert exact(dims["cost"]["reference"]) == Fraction(1, 1800)
    assert exact(dims["cost"]["candidate"]) == Fraction(12, 3600) * Fraction(101528, 10**6)
    assert dims["energy"]["ratio"] is None  # no power entered: no number invented


def test_one_fits_reports_the_infeasible_candidate_and_no_ratio(root: Path) -> None:
    """State 170 GB: reference 170 + 20 <= 200 fits, headroom 10 GB;
    candidate 170/2 = 85 GB + 20 GB reserve = 105 GB > 100 GB: short by 5 GB.

    Reference T_total = T_useful = 170 GB / 500 GB/s = 0.34 s. The candidate's ledger is
    not computed, the comparison is withheld, and no ratio appears in any output.
    """
    doc = ledger_json(root, "placements/fixture-one-fits")
    assert [f["feasible"] for f in doc["feasibility"]] == [True, False]
    assert exact(doc["feasibility"][1]["devices"][0]["headroom"]) == -5 * 10**9
    assert rows(doc, "one-large-host")["total"] == Fraction(34, 100)
    assert doc["ledgers"][1]["computed"] is False
    assert "withheld" in doc["comparisons"][0] and "dimensions" not in doc["comparisons"][0]
    assert doc["break_even"] == []
    code, out = run(root, "placements/fixture-one-fits")
    assert code == 0
    assert "INFEASIBLE" in out and "short by 5 GB" in out and "340 ms" in out
    assert "ratio c/r" not in out and "delta (c-r)" not in out
    assert "T_r/T_c" not in out


def test_tensor_parallel_switched_against_point_to_point(root: Path) -> None:
    """State 140 GB over 4 devices of 80 GB (35 GB each, headroom 45 GB), batch 8.

    T_useful = 140 GB / (4 * 2000 GB/s) = 17.5 ms on both sides.
    Transfer: ring all-reduce, n = 4, 160 per step, S = 16 kB x 8 = 128 kB:
      messages = 160 * 2*3 = 960; bytes = 160 * (2*3/4) * 128,000 = 30,720,000 B.
    Reference (fixture-fast): the receipt receipts/fixture-ar matches link, pattern,
      4 ranks and 128 kB -> measured 80 GB/s end to end (nccl-tests busbw), so the latency
      is inside it and the record's 1 us link_latency is not added a second time:
      Traw = 30.72e6/80e9 s = 0.384 ms -> T_total = 17.884 ms.
    Candidate (fixture-link, no receipt): line rate 10 GB/s (estimate), 5 us:
      Traw = 4.8 ms + 3.072 ms = 7.872 ms -> T_total = 25.372 ms.
    Efficiency T_r/T_c = 17.884 / 25.372 = 4471/6343.
    """
    doc = ledger_json(root, "placements/fixture-tp")
    ref, cand = rows(doc, "switched"), rows(doc, "point-to-point")
    assert ref["useful"] == cand["useful"] == Fraction(175, 10**4)
    assert ref["exposed"] == Fraction(384, 10**6) and ref["total"] == Fraction(17884, 10**6)
    assert cand["exposed"] == Fraction(7872, 10**6) and cand["total"] == Fraction(25372, 10**6)
    ref_ledger = next(x for x in doc["ledgers"] if x["option"] == "switched")
    exposed = next(r for r in ref_ledger["rows"] if r["row"] == "exposed")
    assert exposed["provenance"] == "measured" and exposed["receipts"] == ["receipts/fixture-ar"]
    assert exact(ref_ledger["transfers"][0]["bandwidth"]) == 80 * 10**9
    assert exact(doc["comparisons"][0]["efficiency"]) == Fraction(4471, 6343)
    assert exact(ref_ledger["transfers"][0]["latency"]) == 0


def test_text_output_prints_the_hand_worked_values(root: Path) -> None:
    code, out = run(root, "placements/fixture-both-fit")
    assert code == 0
    assert "101.5 ms" in out and "1.228 ms" in out and "T_r/T_c = 1.97" in out
    assert out.index("1. Feasibility") < out.index("2. Ledgers") < out.index("3. Compar")


def test_set_varies_the_envelope_without_editing_the_record(root: Path) -> None:
    """--set batch=4: bytes = 160 * 1 * 32,000 = 5,120,000 B -> 0.512 ms; Traw = 2.112 ms;
    exposed = 1.612 ms; T_total = 100 + 1.612 + 0.3 = 101.912 ms."""
    before = (root / "placements/fixture-both-fit.yaml").read_text()
    doc = ledger_json(root, "placements/fixture-both-fit", "--set", "batch=4")
    assert rows(doc, "two-hosts")["total"] == Fraction(101912, 10**6)
    assert (root / "placements/fixture-both-fit.yaml").read_text() == before
    doc = ledger_json(root, "placements/fixture-both-fit", "--set", "state_bytes=170GB")
    assert [f["feasible"] for f in doc["feasibility"]] == [True, False]


@pytest.mark.parametrize("setting", ["foo=1", "batch=abc", "batch", "state_bytes=3s"])
def test_bad_set_is_a_usage_error(root: Path, setting: str) -> None:
    code, out = run(root, "placements/fixture-tp", "--set", setting)
    assert code == 2 and "Traceback" not in out


def test_unknown_placement_is_a_usage_error(root: Path) -> None:
    code, out = run(root, "placements/missing")
    assert code == 2 and "no record 'placements/missing'" in out
    code, out = run(root, "placements/fixture-tpp")
    assert code == 2 and "did you mean 'placements/fixture-tp'?" in out


def test_incomplete_placement_prints_lg004_with_location(tmp_path: Path) -> None:
    records = fixture_records()
    del records["interconnects/fixture-link"]["latency"]
    root = write_tree(tmp_path, records) / "records"
    code, out = run(root, "placements/fixture-both-fit")
    assert code == 1
    assert "LG004" in out and "fixture-both-fit.yaml:" in out and "no link latency" in out
    assert "Traceback" not in out
