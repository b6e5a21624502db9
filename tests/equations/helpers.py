"""Build small KnowledgeBase objects in memory for engine tests."""

from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from kb.model import KnowledgeBase, Record

SYMBOLS = """
symbols:
  B: {meaning: batch, unit: "1"}
  d: {meaning: hidden width, unit: "1"}
  P_layer: {meaning: parameters per layer, unit: "1"}
  BW_link: {meaning: link bandwidth, unit: GB/s}
  BW_hbm: {meaning: HBM bandwidth, unit: GB/s}
  B_star: {meaning: crossover batch, unit: "1"}
equations:
  crossover: {expr: "4*B*d/BW_link = 2*P_layer/BW_hbm"}
  b_star: {expr: "B_star = P_layer*BW_link/(2*d*BW_hbm)"}
"""

HARDWARE = {
    "kind": "accelerator",
    "id": "hardware/gpu",
    "memory": {
        "bandwidth": {"value": 3.35, "unit": "TB/s"},
        "capacity": {"value": 80, "unit": "GB"},
    },
}

NUMERIC = """
claims:
  - id: b-star
    kind: numeric
    of: b_star
    bind:
      P_layer: {value: 202375168, unit: "1"}
      d: {value: 4096, unit: "1"}
      BW_link: {value: 450, unit: GB/s}
      BW_hbm: hardware/gpu#memory.bandwidth
    expect: {value: EXPECTED, unit: "1", round: 1}
"""


def flop(extra: str = "", base: str = SYMBOLS) -> dict[str, Any]:
    data = yaml.safe_load(base + extra)
    data.update({"kind": "flop_class", "id": "flops/x"})
    return data


def knowledge_base(root: str, *records: tuple[str, dict[str, Any]]) -> KnowledgeBase:
    kb = KnowledgeBase(root)
    for record_id, data in records:
        folder = record_id.split("/")[0]
        kind = {"flops": "flop_class", "hardware": "accelerator", "models": "model"}[folder]
        kb.add(Record(record_id, kind, f"records/{record_id}.yaml", data))
    return kb


def issues(kb: KnowledgeBase, record_id: str = "flops/x") -> list[Any]:
    from kb.equations.engine import analyse

    result = analyse(kb, use_cache=False).results.get(record_id)
    return result.issues if result else []


def generated_corpus(folder: Path, count: int) -> Path:
    """Write bench/make_corpus.py's synthetic corpus of `count` records; its records folder.

    The script runs once per `count` and process (`_corpus_files`); each call writes its
    files afresh under `folder`, so a test may edit its copy."""
    for relative, data in _corpus_files(count).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(data)
    return folder / "records"


@functools.cache
def _corpus_files(count: int) -> dict[str, bytes]:
    """{path under the output folder: bytes} of bench/make_corpus.py's corpus of `count`."""
    script = Path(__file__).resolve().parents[2] / "bench" / "make_corpus.py"
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, str(script), "--n", str(count), "--out", out]
        subprocess.run(command, check=True, capture_output=True, timeout=300)
        files = sorted(p for p in Path(out).rglob("*") if p.is_file())
        return {p.relative_to(out).as_posix(): p.read_bytes() for p in files}


@functools.cache
def generated_alone_runs(count: int) -> dict[str, tuple[str, str | None]]:
    """tests/equations/shipped.py `alone_runs` of the corpus of `count`, once per process.

    Loaded as `records` from its parent (`load_at`: paths `records/...`), so the results
    are those of any copy loaded so (test_plan.py and test_shared.py compare against them)."""
    from tests.equations.shipped import alone_runs, load_at

    with tempfile.TemporaryDirectory() as out:
        generated_corpus(Path(out), count)
        return alone_runs(load_at(Path(out)))


def derived_system(data: Any) -> Any:
    """The record's System after its derivations (build_system, then check_derivations).

    Neither reads a bound value: for records whose data is the same object, this is the same
    work, done once (`symbolic_alone`'s `derived`)."""
    from kb.equations.derive import check_derivations
    from kb.equations.system import build_system

    system = build_system(data)
    check_derivations(system, data.get("derivations"))
    return system


def symbolic_alone(record: Record, resolve: Any, derived: Any = None) -> Any:
    """The record checked by SymPy alone: every claim by claims.check_claim, no plan, no memo.

    The oracle the engine's exact replay (planbuild, plan.py) is held to; nothing in
    kb takes this route for a claim that binds another record. `derived`: the
    `derived_system` of this record's data, made once for several resolvers (a copy is
    judged, as kb.equations.shared copies a system for each record); None builds it here.
    """
    from kb.equations.claimbase import contexts
    from kb.equations.claims import check_claim, name_waiting_claims
    from kb.equations.engine import RecordResult
    from kb.equations.system import System

    if derived is None:
        system = derived_system(record.data)
    else:
        fields = (dict(derived.symbols), dict(derived.units), list(derived.issues))
        system = System(*fields, list(derived.items), dict(derived.equations), set(derived.failed))
    claims = record.data.get("claims")
    for ctx, claim_id in contexts(system, claims, resolve):
        check_claim(ctx, claim_id)
    if isinstance(claims, list):
        name_waiting_claims(system, claims)
    return RecordResult(record.id, record.path, system.items, system.issues)
