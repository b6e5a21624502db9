"""Records with the same maths share their symbolic work, with byte-identical results.

The cold path (engine.analyse without a cache: the run's SharedWork reuses systems,
derivations, verdicts and compiled claims) is compared, record by record, with a
run of each record alone (a fresh SharedWork: nothing another record did is
reused, as in a fresh process; RecordResult JSON: items and issues, messages,
pointers, related locations), and the plans both leave are compared too; and a
whole run in a fresh process is compared with one after another run in the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml

from kb.equations import engine
from kb.equations.bind import resolve
from kb.equations.cache import STORE
from kb.equations.compose import compose
from kb.loader import load_knowledge_base
from kb.model import KnowledgeBase
from tests.conftest import REPO
from tests.equations.helpers import (
    HARDWARE,
    SYMBOLS,
    generated_alone_runs,
    generated_corpus,
    knowledge_base,
)
from tests.equations.shipped import (
    FULL,
    SHIPPED,
    alone_runs,
    load_at,
    sample_tree,
    sharing_sample,
    shipped_alone_runs,
    shipped_kb,
)
from tests.warm import seed


def _json(result: engine.RecordResult) -> str:
    return json.dumps(engine._to_json(result), sort_keys=True)


def _assert_shared_equals_fresh(
    kb: KnowledgeBase,
    again: KnowledgeBase | None,
    alone: Mapping[str, tuple[str, str | None]] | None = None,
) -> int:
    """analyse(kb) then analyse(again): each record's result == a run of that record alone.

    `alone`: each record's run alone (tests/equations/shipped.py), made from `kb`'s files
    when not given; `again` holds the same files, so its records are compared with it too
    (None: `kb` alone).
    """
    alone = alone_runs(kb) if alone is None else alone
    compared = 0
    for each in (kb,) if again is None else (kb, again):
        analysis = engine.analyse(each, use_cache=False)
        for record in each:
            if not engine.has_equations(record):
                continue
            resolver = partial(resolve, each)
            record = compose(each, record).record  # `uses` resolved, as analyse() does
            alone_result, alone_plan = alone[record.id]
            assert _json(analysis.results[record.id]) == alone_result, record.id
            _, plan = engine.run_record(record, resolver, analysis.shared)  # every text known
            if alone_plan is None:
                assert plan is None, record.id
            else:
                want = json.dumps(json.loads(alone_plan), sort_keys=True)
                assert json.dumps(plan, sort_keys=True) == want, record.id
            compared += 1
    return compared


@pytest.fixture(autouse=True)
def _one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_JOBS", "1")  # one process: the family tests below share in it


@SHIPPED
def test_shipped_records_shared_path_equals_fresh_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped_stores: Path
) -> None:
    """Per push on a sample of the shipped records with what they reference; all with KB_FULL=1.

    The sample (tests/equations/shipped.py `sharing_sample`) shows every form of maths the
    shipped records show (`sample`, the premise held by tests/equations/test_plan.py's
    `test_the_sample_shows_every_form_of_the_shipped_maths`) and holds every record that
    shares its (symbols, equations) text with another, with all its sharers: a record's
    result in a run depends on the other records only through such shared texts
    (kb/equations/shared.py), so what the whole tree shares, the sample shares.

    Two shared runs are held to the runs alone: the cold check of the whole shipped tree
    that made tests/warm.py's stores (another process; its results come back byte for byte
    from its claims' store: none is derived here), and a cold run of the sample here,
    after others in this process, whose plans are compared too.
    """
    picked = sharing_sample(shipped_kb())
    top = REPO if FULL else sample_tree(tmp_path / "records", picked).parent
    # Each record's run alone on the shipped records (made once per process, shared with
    # test_plan.py): the sample is closed under references, so a record alone resolves and
    # reads the same records on either tree, and its result JSON is the same.
    kb = load_at(top)  # paths `records/...`, as the shipped records'
    alone = shipped_alone_runs({r.id for r in kb})
    with monkeypatch.context() as patch:
        patch.setenv("KB_CACHE_DIR", str(seed(shipped_stores, tmp_path / "cache", (STORE,))))
        served = engine.analyse(load_at(top))  # the whole tree's cold run, from its store
    with_equations = {r.id for r in kb if engine.has_equations(r)}
    assert served.stats.symbolic == 0 and served.stats.cached >= len(with_equations)
    for record_id in with_equations:
        assert _json(served.results[record_id]) == alone[record_id][0], record_id
    compared = _assert_shared_equals_fresh(kb, None, alone)
    assert compared == len(with_equations) >= len(picked) >= 5


@SHIPPED  # on the worker that makes the corpus's runs alone (generated_alone_runs)
def test_generated_corpus_shared_path_equals_fresh_runs(tmp_path: Path) -> None:
    generated_corpus(tmp_path / "corpus", 300)
    # paths `records/...` (`load_at`): each record's run alone is shared with test_plan.py
    kb, again = load_at(tmp_path / "corpus"), load_at(tmp_path / "corpus")
    assert _assert_shared_equals_fresh(kb, again, generated_alone_runs(300)) == 2 * 60
    # every flop class of the corpus has one of two equation texts: a run builds two systems
    assert engine.analyse(kb).stats.built_systems == 2  # kb's run, analysed above


CLAIMS = """
claims:
  - id: ID-b
    kind: numeric
    of: b_star
    text: TEXT
    bind: {P_layer: {value: 202375168, unit: "1"}, d: {value: 4096, unit: "1"},
           BW_link: {value: 450, unit: GB/s}, BW_hbm: HBM}
    expect: {value: EXPECTED, unit: "1", rel_tol: 0.01}
  - id: ID-effect
    kind: effect
    of: b_star
    change: {BW_link: HBM}
    bind: {P_layer: {value: 202375168, unit: "1"}, d: {value: 4096, unit: "1"},
           BW_link: {value: 450, unit: GB/s}, BW_hbm: HBM}
    factor: FACTOR
    round: 0.1
  - {id: ID-linear, kind: scaling, of: b_star, var: BW_link, law: proportional}
  - {id: ID-wrong, kind: scaling, of: b_star, var: d, law: proportional}
"""
# (bound field, expected value, factor): recomputed, refuted, a missing field, a wrong unit,
# a zero (division by zero: the compiled tree cannot answer, the symbolic path words it)
FAMILY = [
    ("memory.bandwidth", 3318, 7.4),
    ("memory.bandwidth", 1000, 2),
    ("memory.nothing", 3318, 7.4),
    ("memory.capacity", 3318, 7.4),
    ("memory.zero", 3318, 7.4),
    ("memory.bandwidth", 3318, 7.4),
]


def _family() -> KnowledgeBase:
    hardware = {**HARDWARE, "memory": {**HARDWARE["memory"], "zero": {"value": 0, "unit": "TB/s"}}}
    records: list[tuple[str, dict[str, Any]]] = [("hardware/gpu", hardware)]
    for index, (field, expected, factor) in enumerate(FAMILY):
        text = (
            CLAIMS.replace("ID", f"c{index}")
            .replace("TEXT", f"about {expected}")
            .replace("HBM", f"hardware/gpu#{field}")
            .replace("EXPECTED", str(expected))
            .replace("FACTOR", str(factor))
        )
        data = yaml.safe_load(SYMBOLS + text)
        data.update({"kind": "flop_class", "id": f"flops/x{index}"})
        records.append((f"flops/x{index}", data))
    return knowledge_base("/family", *records)


def test_records_sharing_their_maths_build_it_once() -> None:
    analysis = engine.analyse(_family(), use_cache=False)
    results, stats = analysis.results, analysis.stats
    assert stats.symbolic == len(FAMILY)  # every record checked, not from a cache
    assert stats.built_systems == 1
    assert stats.built_claims == 4  # numeric, effect and both scaling claims, once each
    states = [
        [i.state for i in results[f"flops/x{n}"].items if i.section == "claim"]
        for n in range(len(FAMILY))
    ]
    assert states[0] == ["recomputed", "recomputed", "recomputed", "refuted"]
    assert states[1][:2] == ["refuted", "refuted"]
    assert states[2][:2] == states[3][:2] == ["invalid", "invalid"]
    codes = {i.code for n in (2, 3) for i in results[f"flops/x{n}"].issues}
    assert {"EQ010", "EQ012"} <= codes
    assert states[4][0] == "invalid"  # x/0 at the bound values, worded by SymPy
    assert results["flops/x1"].issues[0].message.startswith("claim c1-b ")  # its own ids
    assert any(i.message.startswith("claim c1-wrong ") for i in results["flops/x1"].issues)


def test_a_family_with_errors_equals_fresh_runs() -> None:
    assert _assert_shared_equals_fresh(_family(), _family()) == 2 * len(FAMILY)


FRESH_PROCESS = """
import json, sys
from pathlib import Path
from kb.equations import engine
from kb.loader import load_knowledge_base
kb, _ = load_knowledge_base(Path(sys.argv[1]))
results = engine.analyse(kb, use_cache=False).results
print(json.dumps({i: json.dumps(engine._to_json(r), sort_keys=True) for i, r in results.items()}))
"""


def test_a_run_after_another_equals_a_run_in_a_fresh_process(tmp_path: Path) -> None:
    """Nothing of one run's symbolic work outlives it: the next run equals a fresh process's."""
    generated_corpus(tmp_path / "corpus", 300)
    root = tmp_path / "corpus" / "records"
    engine.analyse(load_knowledge_base(root)[0], use_cache=False)  # other runs first, here
    engine.analyse(_family(), use_cache=False)
    kb, _ = load_knowledge_base(root)
    here = {i: _json(r) for i, r in engine.analyse(kb, use_cache=False).results.items()}
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, str(root)],
        env={**os.environ, "KB_JOBS": "1"},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == here
    assert sum(record_id.startswith("flops/") for record_id in here) == 60


def test_a_text_gets_one_label_per_run_and_a_data_object_is_repr_d_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Equal (symbols, equations) texts share a label, other texts do not, labels never recur."""
    from kb.equations import shared

    one = {"symbols": {"a": {"unit": "s"}}, "equations": {"e": {"expr": "a = 1"}}}
    same = {"symbols": {"a": {"unit": "s"}}, "equations": {"e": {"expr": "a = 1"}}}
    other = {"symbols": {"a": {"unit": "B"}}, "equations": {"e": {"expr": "a = 1"}}}
    work = shared.SharedWork()
    labels = [work.system_label(d) for d in (one, same, other)]
    assert labels[0] == labels[1] != labels[2] and None not in labels
    reprs: list[object] = []
    real = shared._key
    monkeypatch.setattr(shared, "_key", lambda *parts: reprs.append(parts) or real(*parts))
    assert work.system_label(one) == labels[0] and not reprs  # the same object: no repr
    assert shared.family_key(same, "flops/x", work) == labels[0]
    work.labels.clear()  # as past MAX texts: a new label, never an old one again
    assert work.system_label({**other}) not in labels
