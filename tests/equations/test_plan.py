"""Plans: re-checking new bound values without SymPy gives exactly the symbolic results.

Every comparison is of the RecordResult JSON (items and issues, byte for byte:
states, details, messages, pointers, related locations) between the plan path,
a cold run of the record alone on the same knowledge base (engine.run_record,
nothing shared) and SymPy alone judging every claim (helpers.symbolic_alone).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kb.equations import engine
from kb.equations.bind import resolve
from kb.equations.cache import STORE as EQUATION_STORE
from kb.equations.compose import compose
from kb.equations.figures import check_model
from kb.equations.shared import SharedWork
from kb.model import KnowledgeBase, Record
from tests.conftest import REPO
from tests.equations.helpers import (
    SYMBOLS,
    derived_system,
    flop,
    generated_alone_runs,
    generated_corpus,
    knowledge_base,
    symbolic_alone,
)
from tests.equations.shipped import (
    FULL,
    SHIPPED,
    alone_runs,
    load_at,
    shipped_alone_runs,
    shipped_forms,
    shipped_kb,
    shipped_sample,
)
from tests.warm import seed


def _resolver(kb: KnowledgeBase) -> Callable[[Any], Any]:
    return lambda spec: resolve(kb, spec)


def _json(result: engine.RecordResult) -> str:
    return json.dumps(engine._to_json(result), sort_keys=True)


def _scaled(data: Any, factor: Fraction) -> Any:
    """A deep copy with every quantity's value scaled (the bound values change)."""
    if isinstance(data, Mapping):
        out = {k: _scaled(v, factor) for k, v in data.items()}
        value = data.get("value")
        if "unit" in data and isinstance(value, (int, float)) and not isinstance(value, bool):
            out["value"] = float(Fraction(repr(value)) * factor)
        return out
    if isinstance(data, list):
        return [_scaled(v, factor) for v in data]
    return data


def _perturbed(kb: KnowledgeBase, factor: Fraction) -> KnowledgeBase:
    """The same KB with every record that claims do not live in scaled (hardware, links, ...)."""
    changed = KnowledgeBase(kb.root)
    for record in kb:
        data = record.data if engine.has_equations(record) else _scaled(record.data, factor)
        changed.add(Record(record.id, record.kind, record.path, data))
    return changed


def _check_equivalence(
    kb: KnowledgeBase,
    factors: tuple[Fraction, ...],
    alone: Mapping[str, tuple[str, str | None]] | None = None,
    symbolic_on: Callable[[Fraction, str], str] | None = None,
    only: set[str] | None = None,
) -> dict[str, int]:
    """Plan from `kb`; for each factor, plan path == symbolic path on the scaled KB.

    `alone`: each record's cold run alone on `kb` (tests/equations/shipped.py), made here
    when not given. `symbolic_on(factor, record id)`: the record's symbolic run on the
    scaled KB as JSON (`_shipped_symbolic`), made here when not given. `only`: the ids of
    the records compared (every record with equations when not given).

    A scaled KB changes no record with equations (`_perturbed`; asserted per record): what
    does not read a bound value is the same work at every factor, done once per record.
    The symbolic path runs each record through one SharedWork for all factors (the first
    factor's run is cold; the later ones reuse its system, derivations, verdicts of claims
    that bind nothing and compiled entries, whose keys hold no bound value, as a run does
    for a family of records: tests/equations/test_shared.py holds that equal to fresh
    runs); the oracle (`symbolic_alone`) judges every claim with SymPy at every factor
    from one `derived_system` per record.
    """
    alone = alone_runs(kb) if alone is None else alone
    counts = {"planned": 0, "fallback": 0, "no plan": 0}
    plans, authored = {}, {}
    for record in kb:
        if engine.has_equations(record) and (only is None or record.id in only):
            record = compose(kb, record).record  # `uses` resolved, as analyse() does
            result, plan_text = alone[record.id]
            if plan_text is None:
                counts["no plan"] += 1
                continue
            plan = json.loads(plan_text)  # as it comes back from the cache
            again = engine.run_planned(record, plan, _resolver(kb))
            assert again is not None and _json(again) == result, record.id
            plans[record.id] = json.loads(plan_text)
            authored[record.id] = record.data
    works = {record_id: SharedWork() for record_id in plans}
    derived: dict[str, Any] = {}
    for factor in factors:
        changed = _perturbed(kb, factor)
        for record_id, plan in plans.items():
            record = compose(changed, changed.records[record_id]).record
            assert record.data == authored[record_id], record_id  # only bound values change
            if symbolic_on is None:
                symbolic = _json(engine.run_record(record, _resolver(changed), works[record_id])[0])
            else:
                symbolic = symbolic_on(factor, record_id)
            if record_id not in derived:
                derived[record_id] = derived_system(record.data)
            oracle = symbolic_alone(record, _resolver(changed), derived[record_id])
            assert _json(oracle) == symbolic, record_id
            if FULL:  # the work done once per record equals each run made afresh
                fresh = engine.run_record(record, _resolver(changed))[0]
                assert _json(fresh) == _json(symbolic_alone(record, _resolver(changed))) == symbolic
            planned = engine.run_planned(record, plan, _resolver(changed))
            if planned is None:
                counts["fallback"] += 1
                continue
            counts["planned"] += 1
            assert _json(planned) == symbolic, record_id
    return counts


SHIPPED_FACTORS = (Fraction(1), Fraction(101, 100), Fraction(3, 7))


@functools.cache
def _shipped_scaled(factor: Fraction) -> KnowledgeBase:
    """The shipped records, hardware and the like scaled by `factor` (made once per process)."""
    return _perturbed(shipped_kb(), factor)


@functools.cache
def _shipped_work(record_id: str) -> SharedWork:
    """The one SharedWork of a shipped record's symbolic runs on the scaled records.

    Its first run (whichever factor) is cold; the others reuse what reads no bound value,
    as `_check_equivalence` does for the records it makes its own runs of."""
    return SharedWork()


@functools.cache
def _shipped_symbolic(factor: Fraction, record_id: str) -> str:
    """RecordResult JSON of one shipped record (engine.run_record) on the scaled records.

    Made once per process for both tests of the shipped records below: the plan path and
    the cache are each held to the same symbolic run (`_shipped_work`).
    """
    changed = _shipped_scaled(factor)
    record = compose(changed, changed.records[record_id]).record
    return _json(engine.run_record(record, _resolver(changed), _shipped_work(record_id))[0])


@SHIPPED
def test_shipped_records_plan_path_equals_symbolic_path() -> None:
    """Per push on the sample of the shipped records that shows every form of maths they show.

    The plan path and the symbolic path differ only in how an expression is evaluated: a
    record's plan replays its compiled expressions, node by node (tests/equations/
    test_one_evaluator.py holds each node kind to SymPy's value on every shipped equation).
    So the sample (tests/equations/shipped.py `sample`: every expression node kind, power
    exponent kind, claim kind and field, section, record kind, read from the records' text;
    `test_the_sample_shows_every_form_of_the_shipped_maths`) stands for the tree, and only
    its records are run. Whether a record leaves a plan follows from those forms; the sample
    holds records of both outcomes (asserted below). KB_FULL=1 compares every shipped record.
    """
    kb = shipped_kb()
    picked = shipped_sample()
    runs = shipped_alone_runs(picked)  # KB_FULL=1: every record (`sample`)
    counts = _check_equivalence(kb, SHIPPED_FACTORS, runs, _shipped_symbolic, picked)
    assert counts["planned"] >= 3 * (len(picked) - 2), counts  # most take the plan path
    assert counts["fallback"] == 0, counts
    assert counts["no plan"] >= 1, counts  # both outcomes of a cold run: plan and no plan


# Cheap records of the sample with derivations and binding claims: the premise below.
SHARED_PREMISE = ("flops/context-parallel-kv-exchange", "flops/kv-cache-capacity-paged")


@SHIPPED
def test_work_done_once_per_record_equals_each_run_made_afresh() -> None:
    """The premise of `_check_equivalence`'s sharing across factors, per push on two records
    (every compared record with KB_FULL=1): the symbolic run through the record's one
    SharedWork (`_shipped_symbolic`) and the oracle from its one `derived_system` equal a
    fresh run_record and a fresh `symbolic_alone`, at every factor."""
    kb = shipped_kb()
    for record_id in SHARED_PREMISE:
        data = kb.records[record_id].data
        assert data.get("derivations") and any(engine.binding_specs(kb.records[record_id]))
        derived = derived_system(compose(kb, kb.records[record_id]).record.data)
        for factor in SHIPPED_FACTORS:
            changed = _shipped_scaled(factor)
            record = compose(changed, changed.records[record_id]).record
            fresh = _json(engine.run_record(record, _resolver(changed))[0])
            assert _shipped_symbolic(factor, record_id) == fresh, (record_id, factor)
            oracle = symbolic_alone(record, _resolver(changed), derived)
            assert _json(oracle) == _json(symbolic_alone(record, _resolver(changed))), record_id


@SHIPPED
def test_the_sample_shows_every_form_of_the_shipped_maths() -> None:
    every, sampled = shipped_forms()
    assert sampled == every
    assert {"Max", "floor", "Pow:negative", "Pow:rational", "claim:numeric"} <= every


@SHIPPED  # on the worker that makes the corpus's runs alone (generated_alone_runs)
def test_generated_corpus_plan_path_equals_symbolic_path(tmp_path: Path) -> None:
    generated_corpus(tmp_path / "corpus", 300)
    kb = load_at(tmp_path / "corpus")  # paths `records/...`: each record's run alone is shared
    factors = (Fraction(1001, 1000), Fraction(2))
    counts = _check_equivalence(kb, factors, generated_alone_runs(300))
    assert counts == {"planned": 2 * 60, "fallback": 0, "no plan": 0}


@SHIPPED
def test_engine_serves_changed_bindings_from_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped_stores: Path
) -> None:
    """Through analyse() and its cache: plans answer, and answer as a cache-less run does.

    The cache starts with the claims' results and plans one cold check of the shipped
    records left (tests/warm.py); the cache-less run is each record alone on the changed
    records (`_shipped_symbolic`, shared with the test above), compared per push on the
    sample of the test above (its argument), on every record with KB_FULL=1.
    """
    monkeypatch.setenv(
        "KB_CACHE_DIR", str(seed(shipped_stores, tmp_path / "cache", (EQUATION_STORE,)))
    )
    kb = shipped_kb()
    factor = SHIPPED_FACTORS[1]
    changed = _perturbed(kb, factor)
    served = engine.analyse(changed)
    assert served.stats.planned >= 5
    assert served.stats.symbolic <= len(served.results) - 5
    with_equations = {r.id for r in kb if engine.has_equations(r)}
    models = {r.id for r in kb.of_kind("model") if any(check_model(r.data))}
    assert served.results.keys() == with_equations | models
    picked = shipped_sample()  # as the test above; KB_FULL=1: every record
    for record_id, result in served.results.items():
        record = changed.records[record_id]
        if record_id in with_equations:
            if record_id not in picked:
                continue
            assert _json(result) == _shipped_symbolic(factor, record_id), record_id
        else:  # a model's figures, checked on every run (never cached)
            items, issues = check_model(record.data)
            fresh = engine.RecordResult(record.id, record.path, items, issues)
            assert _json(result) == _json(fresh), record_id
    assert any(i.code == "EQ007" for r in served.results.values() for i in r.issues)


HARDWARE_FIELDS = ("link", "hbm", "layer", "width")
CLAIMS = """
claims:
  - id: b-star
    kind: numeric
    of: b_star
    bind: {P_layer: hardware/gpu#layer, d: hardware/gpu#width,
           BW_link: hardware/gpu#link, BW_hbm: hardware/gpu#hbm}
    expect: EXPECT
  - id: mixed
    kind: numeric
    expr: "max(BW_link, BW_hbm)/BW_hbm + floor(P_layer/d) - ceil(d/3)**2 + min(B, d)"
    bind: {P_layer: hardware/gpu#layer, d: hardware/gpu#width, B: {value: 3, unit: "1"},
           BW_link: hardware/gpu#link, BW_hbm: hardware/gpu#hbm}
    expect: EXPECT
  - id: ratio-in-ms
    kind: numeric
    expr: "P_layer/BW_hbm"
    bind: {P_layer: hardware/gpu#layer, BW_hbm: hardware/gpu#hbm}
    expect: {value: 1.5, unit: "1/(GB/s)", rel_tol: 0.1}
  - id: power
    kind: numeric
    expr: "(BW_link/BW_hbm)**B"
    bind: {BW_link: hardware/gpu#link, BW_hbm: hardware/gpu#hbm, B: {value: 3, unit: "1"}}
    expect: {value: 0.002, unit: "1", round: 0.001}
  - id: faster-link
    kind: effect
    of: b_star
    change: {BW_link: hardware/gpu#hbm}
    bind: {P_layer: hardware/gpu#layer, d: hardware/gpu#width,
           BW_link: hardware/gpu#link, BW_hbm: hardware/gpu#hbm}
    factor: 2.5
    rel_tol: 0.01
  - id: faster-link-anywhere
    kind: effect
    of: b_star
    change: {BW_link: hardware/gpu#hbm}
    bind: {BW_link: hardware/gpu#link}
    factor: 7.4
    round: 0.1
  - id: linear
    kind: scaling
    of: b_star
    var: BW_link
    law: proportional
"""
NUMBERS = st.one_of(
    st.sampled_from([0, 1, -1, 0.5, -2.5, 1.0e-30, 3.0e30, 4096, 202375168, 3.35]),
    st.integers(-(10**6), 10**12),
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False),
)
RATES = st.sampled_from(["GB/s", "TB/s", "Gbit/s", "MB/s", "GB/s", "GB", "Gbps"])  # 2 wrong
COUNTS = st.sampled_from(["1", "1", "1", "1", "s"])
UNITS = {"link": RATES, "hbm": RATES, "layer": COUNTS, "width": COUNTS}
EXPECTS = st.fixed_dictionaries(
    {"value": NUMBERS, "unit": st.sampled_from(["1", "1", "GB/s", "bogus"])},
    optional={
        "round": st.sampled_from([1, 0.1, 0.001, 1.0e7, -1, 0]),
        "rel_tol": st.sampled_from([0.01, 0.002, 1, 0]),
        "abs_tol": st.sampled_from([1.0e-7, 10, 0]),
    },
)


def _kb_with(quantities: Mapping[str, Any], expect: Any) -> KnowledgeBase:
    data = flop(CLAIMS.replace("EXPECT", json.dumps(expect)), base=SYMBOLS)
    hardware = {"kind": "accelerator", "id": "hardware/gpu", **quantities}
    return knowledge_base("/x", ("flops/x", data), ("hardware/gpu", hardware))


_BASELINE = {
    "link": {"value": 450, "unit": "GB/s"},
    "hbm": {"value": 3.35, "unit": "TB/s"},
    "layer": {"value": 202375168, "unit": "1"},
    "width": {"value": 4096, "unit": "1"},
}


# Per push 30 fixed examples (profile `kb`, tests/conftest.py), ~0.2 CPU-s each; a long run
# sets KB_FUZZ_EXAMPLES (docs/guarantees.md).
@settings(
    max_examples=int(os.environ.get("KB_FUZZ_EXAMPLES", "0")) or 30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.fixed_dictionaries(
        {
            name: st.fixed_dictionaries({"value": NUMBERS, "unit": UNITS[name]})
            for name in HARDWARE_FIELDS
        }
    ),
    EXPECTS,
)
def test_random_bound_values_give_identical_results(quantities, expect) -> None:
    baseline = _kb_with(_BASELINE, expect)
    _, plan = engine.run_record(baseline.records["flops/x"], _resolver(baseline))
    assert plan is not None
    plan = json.loads(json.dumps(plan))
    kb = _kb_with(quantities, expect)
    record = kb.records["flops/x"]
    symbolic, _ = engine.run_record(record, _resolver(kb))
    assert _json(symbolic_alone(record, _resolver(kb))) == _json(symbolic)
    planned = engine.run_planned(record, plan, _resolver(kb))
    if planned is None:  # only at a zero: SymPy words x/0, or cancels an effect's 0/0
        event("fallback")
        assert any(q["value"] == 0 for q in quantities.values()), symbolic
        return
    for item in planned.items:
        if item.section == "claim":
            event(f"{item.id} {item.state}")
    assert _json(planned) == _json(symbolic)


def test_a_plan_is_not_kept_for_claims_that_are_not_exact_arithmetic() -> None:
    extra = """
claims:
  - id: root
    kind: numeric
    expr: "sqrt(P_layer*d)"
    bind: {P_layer: hardware/gpu#count, d: {value: 9, unit: "1"}}
    expect: {value: 6, unit: "1"}
"""
    hardware = {"kind": "accelerator", "id": "hardware/gpu", "count": {"value": 4, "unit": "1"}}
    kb = knowledge_base("/x", ("flops/x", flop(extra)), ("hardware/gpu", hardware))
    result, plan = engine.run_record(kb.records["flops/x"], _resolver(kb))
    assert plan is None
    assert [i.state for i in result.items if i.section == "claim"] == ["recomputed"]


def _validate_script(root: Path) -> str:
    return (
        "import sys\nfrom pathlib import Path\n"
        "from kb.api import validate\n"
        f"result = validate(Path({str(root)!r}), remember=False)\n"
        "stats = result.stats\n"
        "print(len(result.findings), 'sympy' in sys.modules, stats.symbolic, stats.planned)\n"
    )


def test_changing_a_bound_hardware_value_does_not_import_sympy(tmp_path: Path) -> None:
    generated_corpus(tmp_path / "corpus", 200)
    root = tmp_path / "corpus" / "records"
    env = {**os.environ, "KB_CACHE_DIR": str(tmp_path / "cache"), "KB_JOBS": "1"}

    def validate() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", _validate_script(root)],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    cold = validate()
    assert cold[1] == "True" and int(cold[2]) == 40  # every flop class checked symbolically
    hot = root / "hardware" / "bench-gpu-0000.yaml"
    text = hot.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    old = data["memory"]["bandwidth"]["value"]
    hot.write_text(
        text.replace(f"bandwidth: {{value: {old},", f"bandwidth: {{value: {old + 1},"),
        encoding="utf-8",
    )
    changed = validate()
    assert changed[0] == cold[0]  # within the claims' rel_tol: still the same findings
    assert changed[1:3] == ["False", "0"], changed  # no SymPy, nothing re-derived
    assert int(changed[3]) >= 5, changed  # the flop classes binding bench-gpu-0000: plans
    warm = validate()
    assert warm[1:] == ["False", "0", "0"], warm


def test_copy_of_plan_is_independent() -> None:
    """Replaying a plan twice gives equal, separate results (nothing shared is mutated)."""
    kb = _kb_with(_BASELINE, {"value": 1, "unit": "1", "rel_tol": 0.01})
    record = kb.records["flops/x"]
    _, plan = engine.run_record(record, _resolver(kb))
    assert plan is not None
    first = engine.run_planned(record, copy.deepcopy(plan), _resolver(kb))
    second = engine.run_planned(record, plan, _resolver(kb))
    assert first is not None and second is not None and _json(first) == _json(second)
