"""Whether a result may be kept is data: the budget counts what it stopped (issue 34).

A result a budget decided (a check out of its steps, past its guard, or a
simplification inside a check that gave up) is kept by no store: not the equations
cache, not the plan, not the run snapshot, not the site's manifest. That used to be
read from the words of its messages ("(timeout)", "timed out"), so a finding that
quoted those words was never remembered, and a wording change could let a timeout
be kept. Now kb.equations.timeout counts each stop, the engine marks the record's
result `budgeted`, and the stores read that field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kb.equations import algebra, timeout
from kb.equations.cache import ResultCache
from kb.equations.engine import analyse
from tests.conftest import source_yaml, write_tree
from tests.equations.helpers import flop, knowledge_base

WORDS = "the link timed out (timeout) twice"
# T is n + 1 (the root denests): a scaling claim SymPy refutes; with decide_zero's
# simplification stopped, a numeric witness still refutes it, in other words.
SCALING = """
symbols:
  T: {meaning: time, unit: "1"}
  n: {meaning: count, unit: "1"}
equations:
  transfer: {expr: "T = sqrt(n + 2*sqrt(n) + 1) - sqrt(n) + n"}
claims:
  - {id: proportional, kind: scaling, of: transfer, var: n, law: proportional}
"""


def test_the_cache_keeps_a_result_by_its_field_not_its_words(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path, "salt")
    worded = {"items": [{"detail": WORDS}], "issues": [{"code": "EQ008", "message": WORDS}]}
    cache.put("worded", worded)
    cache.put("budgeted", {"items": [], "issues": [], "budgeted": True})
    assert cache.get("worded") == worded
    assert cache.get("budgeted") is None


def _simplify_in_one_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """decide_zero's simplification gets a budget of one step: a real stop, which it swallows."""
    real = timeout.run_with_budget

    def one_step(work: Any, steps: int | None = None, run: Any = None) -> Any:
        return real(work, 1, run)

    monkeypatch.setattr(algebra, "run_with_budget", one_step)


def test_a_simplification_a_budget_stopped_makes_the_result_budgeted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KB_JOBS", "1")
    records = [(f"flops/{name}", {**flop(base=SCALING), "id": f"flops/{name}"}) for name in "xy"]

    def analysed() -> Any:
        return analyse(knowledge_base(str(tmp_path), *records))

    with monkeypatch.context() as patch:
        _simplify_in_one_step(patch)
        stopped = analysed()
        # y reuses x's symbolic work (the same maths): the stop is counted for it too
        assert [stopped.results[r].budgeted for r in ("flops/x", "flops/y")] == [True, True]
        assert stopped.stats.symbolic == 2
    again = analysed()  # nothing was kept: both are checked again, and now decided
    assert (again.stats.cached, again.stats.planned, again.stats.symbolic) == (0, 0, 2)
    assert not any(result.budgeted for result in again.results.values())
    # the stopped result's words never said so: read from its text, it would have been kept
    result = stopped.results["flops/x"]
    words = str([i.message for i in result.issues] + [i.detail for i in result.items])
    assert "timeout" not in words and "timed out" not in words
    assert analysed().stats.cached == 2  # a result no budget decided is kept


def test_a_finding_that_quotes_the_words_is_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose finding quotes "timed out" is not read again on every run."""
    from kb import api, snapshot

    root = write_tree(
        tmp_path / "records",
        {"sources/doc.yaml": source_yaml().replace("documentation", f'"{WORDS}"')},
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(snapshot, "MARGIN_NS", 0)  # every file is settled at once
    first = api.validate(Path("records"))
    assert [f.code for f in first.findings] == ["SC001"] and WORDS in first.findings[0].message
    second = api.validate(Path("records"))
    assert second.stats.mode == "snapshot" and second.findings == first.findings
    assert root.exists()


def _one() -> int:
    return 1


def _swallowing() -> str:
    """A check whose inner check runs out of its ten steps, and carries on (as decide_zero)."""
    try:
        timeout.run_with_budget(lambda: sum(_one() for _ in range(10_000)), 10)
    except timeout.CheckTimeout:
        return "carried on"
    return "finished"


@pytest.mark.parametrize("path", ["alarm", "forked child", "helper thread"])
def test_a_stop_counts_on_every_path_of_the_guard(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the work runs (this thread, a forked child, a helper thread), its stops count here."""
    if path != "alarm":
        monkeypatch.setattr(timeout, "_alarm_usable", lambda: False)
    if path == "helper thread":
        monkeypatch.setattr(timeout.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    with timeout.record_budget() as run:
        before = timeout.budgets_stopped(run)
        assert timeout.run_with_budget(_swallowing, 1_000_000, run) == "carried on"
        assert timeout.budgets_stopped(run) == before + 1
