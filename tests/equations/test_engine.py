"""The engine as a whole: caching, dependants, time budgets, and the shipped seed record."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kb.equations import engine
from kb.equations.timeout import CheckTimeout, run_with_budget
from kb.reads import graph_of
from tests.equations.helpers import HARDWARE, NUMERIC, flop, knowledge_base
from tests.inprocess import kb_in_process

SEED = "flops/sched-tensor-parallel-crossover"


def _kb(root: Path, bandwidth: float = 3.35):
    hardware = {
        **HARDWARE,
        "memory": {**HARDWARE["memory"], "bandwidth": {"value": bandwidth, "unit": "TB/s"}},
    }
    data = flop(NUMERIC.replace("EXPECTED", "3318"))
    return knowledge_base(str(root), ("flops/x", data), ("hardware/gpu", hardware))


def test_second_run_with_nothing_changed_does_no_symbolic_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    first = engine.analyse(_kb(tmp_path))
    assert first.stats.symbolic == 1
    second = engine.analyse(_kb(tmp_path))
    assert (second.stats.symbolic, second.stats.cached) == (0, 1)
    assert second.results["flops/x"].items == first.results["flops/x"].items
    changed = engine.analyse(_kb(tmp_path, bandwidth=3.0))
    assert changed.stats.symbolic == 0  # only the bound value changed: the plan
    assert changed.stats.planned == 1
    assert [i.code for i in changed.results["flops/x"].issues] == ["EQ007"]
    fresh = engine.analyse(_kb(tmp_path, bandwidth=3.0), use_cache=False).results["flops/x"]
    assert (changed.results["flops/x"].items, changed.results["flops/x"].issues) == (
        fresh.items,
        fresh.issues,
    )


def _stored_keys(cache: Path) -> set[str]:
    from kb import fingerprint
    from kb.equations.cache import STORE
    from kb.store import ShardedStore

    return ShardedStore(cache, STORE, fingerprint.salt()).keys()


def test_a_record_keeps_one_result_and_a_full_run_drops_what_it_did_not_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.equations.helpers import knowledge_base

    cache = tmp_path / "cache"
    monkeypatch.setenv("KB_CACHE_DIR", str(cache))
    engine.analyse(_kb(tmp_path))
    first = _stored_keys(cache)
    assert len(first) == 2  # the record's result (in its slot) and its maths' plan
    for bandwidth in (3.0, 3.1, 3.2):  # each change replaces the result, never adds one
        partial = _kb(tmp_path, bandwidth)
        partial.run.focus = frozenset({"records/flops/x.yaml"})
        assert engine.analyse(partial).stats.planned == 1
        assert _stored_keys(cache) == first
    served = engine.analyse(_kb(tmp_path, 3.2))  # a full run served from the cache keeps the plan
    assert (served.stats.cached, _stored_keys(cache)) == (1, first)
    changed = engine.analyse(_kb(tmp_path, 3.3))
    assert changed.stats.planned == 1  # the plan was kept by the run that only served results
    engine.analyse(knowledge_base(str(tmp_path), ("hardware/gpu", {})))  # flops/x is gone
    assert _stored_keys(cache) == set()


def test_a_corrupt_cache_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("KB_CACHE_DIR", str(cache))
    engine.analyse(_kb(tmp_path))
    shards = list(cache.glob("equations-*.kbstore"))
    assert shards
    for entry in shards:
        entry.write_bytes(entry.read_bytes()[:-5])  # truncated: the last entry fails its check
    result = engine.analyse(_kb(tmp_path))
    assert result.stats.symbolic == 1
    assert result.results["flops/x"].issues == []


def test_a_cached_value_that_is_not_json_is_a_miss(tmp_path: Path) -> None:
    from kb.equations.cache import ResultCache

    cache = ResultCache(tmp_path, "salt")
    cache.put("a" * 64, {"x": [1, 2.5, None]})
    assert cache.store is not None
    cache.store.put("a" + "b" * 63, "{not json")
    cache.flush()
    again = ResultCache(tmp_path, "salt")
    assert again.get("a" * 64) == {"x": [1, 2.5, None]}
    assert again.get("a" + "b" * 63) is None and again.get("f" * 64) is None


def test_dependants_follow_bindings(tmp_path: Path) -> None:
    graph = graph_of(_kb(tmp_path))
    assert graph.referrers("hardware/gpu") == ["flops/x"]
    assert graph.referrers("flops/x") == []


def _calls(count: int) -> str:
    for _ in range(count):  # Python calls: the steps a budget counts
        _step()
    return "called"


def _step() -> None:
    return None


def test_budget_stops_runaway_work_in_the_main_thread() -> None:
    with pytest.raises(CheckTimeout, match="budget of 10,000 steps"):
        run_with_budget(lambda: _calls(10**9), 10_000)
    assert run_with_budget(lambda: 41 + 1, 10) == 42


def test_budget_works_off_the_main_thread_too() -> None:
    outcome: dict[str, object] = {}

    def worker() -> None:
        started = time.perf_counter()
        try:
            run_with_budget(lambda: _calls(10**9), 10_000)
        except CheckTimeout:
            outcome["timed_out_after"] = time.perf_counter() - started
        outcome["value"] = run_with_budget(lambda: "done", 10)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(10)
    assert outcome["value"] == "done"
    assert outcome["timed_out_after"] < 1.5  # type: ignore[operator]


def test_changing_h100_bandwidth_fails_the_flop_class_naming_both_files(
    warm_copy: Path, tmp_path: Path
) -> None:
    hardware = warm_copy / "hardware" / "nvidia-h100-sxm.yaml"
    original = hardware.read_text(encoding="utf-8")
    assert "bandwidth: {value: 3350, unit: GB/s" in original
    hardware.write_text(
        original.replace(
            "bandwidth: {value: 3350, unit: GB/s", "bandwidth: {value: 3000, unit: GB/s"
        ),
        encoding="utf-8",
    )
    broken = kb_in_process(["validate", "--root", str(warm_copy)], cwd=tmp_path)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    lines = broken.stdout.splitlines()
    claim_lines = [
        n
        for n, line in enumerate(lines)
        if "sched-tensor-parallel-crossover.yaml" in line and "EQ007" in line
    ]
    assert claim_lines, broken.stdout
    block = []
    for line in lines[claim_lines[0] + 1 :]:
        if not line.startswith(" "):
            break
        block.append(line)
    assert any("see: records/hardware/nvidia-h100-sxm.yaml:" in line for line in block), block
    # b-star-tp8-alpha0: 202375168*450/(4*7*4096*3000) = 9264/35, recomputed
    assert "claim b-star-tp8-alpha0 is refuted: computed 264.68571" in broken.stdout
    hardware.write_text(original, encoding="utf-8")
    restored = kb_in_process(["validate", "--root", str(warm_copy)], cwd=tmp_path)
    assert restored.returncode in (0, 1), restored.stderr
    assert " EQ0" not in restored.stdout, restored.stdout


def test_every_item_of_the_seed_record_holds_and_every_seed_statement_is_an_erratum(
    tmp_path: Path,
) -> None:
    """Checked on the seed record with every shipped record it reaches by reference (a record's
    result reads nothing else of the tree), not on all of them."""
    from kb.loader import load_knowledge_base
    from tests.equations.shipped import sample_tree

    kb, _ = load_knowledge_base(sample_tree(tmp_path / "records", {SEED}))
    result = engine.analyse(kb, use_cache=False).results[SEED]
    assert result.issues == []
    states = {item.id: item.state for item in result.items}
    errata = {i for i, state in states.items() if state == "erratum"}
    assert errata == {c["id"] for c in kb.get(SEED).data["claims"] if "erratum" in c}
    assert {
        "seed-b-star-nvlink-full",
        "seed-b-star-nvlink-single",
        "seed-b-star-pcie-4",
        "seed-rs-ag-halves-b-star",
        "seed-fabric-not-model",
        "seed-tp-free",
        "seed-no-measured-refutations",
        "seed-b-star-flat-in-n",
    } <= errata
    assert {s for i, s in states.items() if i not in errata} <= {
        "consistent",
        "derived",
        "recomputed",
    }
    for claim in (
        "b-star-tp2-alpha0",
        "b-star-tp4-alpha0",
        "b-star-tp8-alpha0",
        "b-star-tp8-alpha",
        "comm-compute-tp8",
        "degree-comm-equals-compute",
        "width-effect-7b-to-70b",
        "b-star-spread",
        "reduce-scatter-all-gather-effect",
        "nvswitch-effect",
        "ring-flat-in-n",
        "tp-crossover.8",
        "tp-crossover.9",
    ):
        assert states[claim] in ("recomputed", "derived"), claim
    full = next(i for i in result.items if i.id == "seed-b-star-nvlink-full")
    assert "computed 237.03198" in full.detail and "claimed 3318" in full.detail


def test_the_seed_figure_made_true_fails_as_an_erratum_no_longer_refuted(
    warm_copy: Path, tmp_path: Path
) -> None:
    seed = warm_copy / "flops" / "sched-tensor-parallel-crossover.yaml"
    original = seed.read_text(encoding="utf-8")
    marker = 'expect: {value: 3318, unit: "1", round: 1'
    assert marker in original
    seed.write_text(
        original.replace(marker, 'expect: {value: 237, unit: "1", round: 1'), encoding="utf-8"
    )
    broken = kb_in_process(["validate", "--root", str(warm_copy)], cwd=tmp_path)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "EQ017" in broken.stdout and "seed-b-star-nvlink-full" in broken.stdout, broken.stdout
    seed.write_text(original, encoding="utf-8")


CALC_ROOTS = (SEED, "hardware/nvidia-h200-sxm", "hardware/nvidia-h100-sxm", "models/llama-2-7b")


@pytest.fixture(scope="module")
def calc_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The records `kb calc` reads in the tests below: per push the seed and every record
    their --set values name, with all they reference (tests/sample.py's closure; calc reads
    nothing else of the tree); the shipped records with KB_FULL=1."""
    from tests.conftest import SHIPPED_RECORDS
    from tests.sample import full, sample_copy

    if full():
        return SHIPPED_RECORDS
    return sample_copy(tmp_path_factory.mktemp("calc") / "records", CALC_ROOTS)


def test_calc_prints_the_trail_and_the_result(tmp_path: Path, calc_records: Path) -> None:
    done = kb_in_process(
        [
            "calc",
            SEED,
            "B_star",
            "--root",
            str(calc_records),
            "--set",
            "BW_hbm=hardware/nvidia-h200-sxm#memory.bandwidth",
            "--set",
            "BW_link=63 GB/s",
            "--set",
            "P_layer=models/llama-2-7b#derived.params_per_layer",
            "--set",
            "d=models/llama-2-7b#geometry.d_model",
        ],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "BW_hbm = 4.8 TB/s = 4800 GB/s" in done.stdout
    assert "P_layer = 202375168" in done.stdout
    # 202375168 * 63 / (2 * 4096 * 4800) = 324.24 exactly
    assert done.stdout.strip().splitlines()[-1] == "B_star = 324.2 (exact 8106/25)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "W=63 Gbps"], "write Gbit/s"),  # W: a symbol of the default target B_tp
        (["--set", "W=hardware/nvidia-h100-sxm#memory.capacity"], "declared GB/s"),
        (["--set", "nonsense"], "NAME=VALUE"),
        (["--set", "BW_lnk=63 GB/s"], "not symbols"),
        (["no_such_equation"], "neither an equation nor a symbol"),
    ],
)
def test_calc_bad_input_exits_2_with_a_message(
    tmp_path: Path, calc_records: Path, args: list[str], message: str
) -> None:
    done = kb_in_process(["calc", SEED, *args, "--root", str(calc_records)], cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_nested_budgets_keep_the_outer_deadline() -> None:
    def outer_work() -> str:
        run_with_budget(lambda: None, 2_000)  # a quick inner check must not eat the outer budget
        _calls(500)
        return "finished"

    assert run_with_budget(outer_work, 10_000) == "finished"

    def inner_swallows_timeout() -> None:
        try:
            run_with_budget(lambda: _calls(10**9), 50_000)  # capped by the outer 10,000
        except CheckTimeout:
            pass
        _calls(10**9)  # the outer budget is spent: this must be stopped too

    with pytest.raises(CheckTimeout, match="budget of 10,000 steps"):
        run_with_budget(inner_swallows_timeout, 10_000)


def test_forked_workers_give_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8 records in 6 families (a symbol's meaning differs): families go to the workers."""
    from kb.workers import can_fork, worker_count

    def record(i: int) -> tuple[str, dict]:
        data = flop(NUMERIC.replace("EXPECTED", str(3318 + i % 2)))
        data["symbols"]["B"] = {"meaning": f"batch {i % 6}", "unit": "1"}
        return f"flops/x{i}", {**data, "id": f"flops/x{i}"}

    records = [record(i) for i in range(8)]
    results = {}
    monkeypatch.setenv("KB_JOBS", "2")
    assert worker_count() == 2 and can_fork()  # the forked path really runs below
    for workers in ("1", "2"):
        monkeypatch.setenv("KB_JOBS", workers)
        kb = knowledge_base(str(tmp_path), *records, ("hardware/gpu", HARDWARE))
        analysis = engine.analyse(kb, use_cache=False)
        assert analysis.stats.symbolic == 8
        # built here in one process, in the workers with two: they return what they built
        assert analysis.stats.built_systems == 6
        results[workers] = {rid: (r.items, r.issues) for rid, r in analysis.results.items()}
    assert results["1"] == results["2"]
    assert [i.code for i in results["2"]["flops/x1"][1]] == ["EQ007"]
    assert results["2"]["flops/x0"][1] == []


def test_few_families_are_checked_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """7 records of one family: no fork (it cost more than it saved for cheap records)."""
    monkeypatch.setenv("KB_JOBS", "2")
    records = [
        (f"flops/x{i}", {**flop(NUMERIC.replace("EXPECTED", "3318")), "id": f"flops/x{i}"})
        for i in range(7)
    ]
    analysis = engine.analyse(
        knowledge_base(str(tmp_path), *records, ("hardware/gpu", HARDWARE)), use_cache=False
    )
    assert analysis.stats.built_systems == 1  # once for the family


def test_a_warm_run_does_not_even_import_sympy(tmp_path: Path, shipped_stores: Path) -> None:
    """A fresh process over the shipped records whose cache holds what one cold check of
    them left (tests/warm.py: the cold run is made once for the whole test run, and its
    checks derived every claim) analyses nothing and never imports SymPy."""
    import subprocess
    import sys

    from tests.conftest import SHIPPED_RECORDS
    from tests.warm import seed

    script = (
        "import sys; from pathlib import Path\n"
        "from kb.loader import load_knowledge_base\n"
        "from kb.equations import engine\n"
        f"kb, _ = load_knowledge_base(Path({str(SHIPPED_RECORDS)!r}))\n"
        "analysis = engine.analyse(kb)\n"
        "print(analysis.stats.symbolic, analysis.stats.cached, 'sympy' in sys.modules)\n"
    )
    cache = seed(shipped_stores, tmp_path / "cache")
    env = {**__import__("os").environ, "KB_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    symbolic, cached, imported = done.stdout.split()
    assert (symbolic, imported) == ("0", "False")
    assert int(cached) >= 20  # the shipped records with equations came from the cache


def test_the_states_and_new_fields_come_out_of_a_cached_run_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    fresh = engine.analyse(_kb(tmp_path)).results["flops/x"].items
    again = engine.analyse(_kb(tmp_path))
    cached = again.results["flops/x"].items
    assert again.stats.cached == 1  # served from the cache
    assert cached == fresh
    assert [(i.section, i.kind, i.state) for i in cached] == [
        ("equation", "", "consistent"),
        ("equation", "", "consistent"),
        ("claim", "numeric", "recomputed"),
    ]


def test_a_result_is_kept_as_the_json_it_was_made_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache makes a result's text from its RecordResult only when it is written.

    That gives the JSON the result was made from exactly, compose.py's issues (never
    cached) left out, and a warm run serves the same result.
    """
    from kb.equations.cache import ResultCache
    from tests.equations.test_compose import USED, USER
    from tests.equations.test_compose import _kb as composed_kb

    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    kept: list[tuple[Any, Any]] = []
    real = ResultCache.put

    def put(
        self: ResultCache, key: str, value: Any, slot: Any = None, plan: str = "", later: Any = None
    ) -> None:
        if later is not None:
            kept.append((value, later))
        real(self, key, value, slot, plan, later)

    monkeypatch.setattr(ResultCache, "put", put)
    user = USER.replace("P: P_model}", "P: P_modl}")  # compose.py's EQ023
    cold = engine.analyse(composed_kb(USED, user)).results["flops/tp"]
    assert "EQ023" in [issue.code for issue in cold.issues]
    [(value, later)] = [(v, f) for v, f in kept if v["record_id"] == "flops/tp"]
    assert later() == value and json.dumps(later(), sort_keys=True) == json.dumps(
        value, sort_keys=True
    )
    assert "EQ023" not in [issue["code"] for issue in value["issues"]]
    warm = engine.analyse(composed_kb(USED, user))
    assert warm.stats.cached == 2 and warm.results["flops/tp"] == cold


def test_a_binding_text_is_resolved_once_a_run_for_every_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seven records bind the same `id#field`s: each text is resolved once, the results equal."""
    records = [
        (
            f"flops/x{i}",
            {**flop(NUMERIC.replace("EXPECTED", str(3318 + i % 2))), "id": f"flops/x{i}"},
        )
        for i in range(7)
    ]
    kb = knowledge_base(str(tmp_path), *records, ("hardware/gpu", HARDWARE))
    alone = {
        record_id: engine._resolve_all(kb, kb.records[record_id], {}) for record_id, _ in records
    }
    calls: list[object] = []
    real = engine.resolve

    def counted(kb_: object, spec: object) -> object:
        calls.append(spec)
        return real(kb_, spec)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "resolve", counted)
    specs: dict[str, object] = {}
    shared = {
        record_id: engine._resolve_all(kb, kb.records[record_id], specs)  # type: ignore[arg-type]
        for record_id, _ in records
    }
    assert shared == alone and alone["flops/x0"]  # the same bindings, and there are some
    texts = sorted(key for key in alone["flops/x0"] if not key.startswith("{"))  # not literals
    assert texts and sorted(c for c in calls if isinstance(c, str)) == texts  # once, not 7 times
    analysis = engine.analyse(kb, use_cache=False)
    assert [i.code for i in analysis.results["flops/x1"].issues] == ["EQ007"]
    assert analysis.results["flops/x0"].issues == []
