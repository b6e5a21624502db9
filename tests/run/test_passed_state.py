"""A run's state is passed to it, never read from a module global (issue 34).

The records standing in for files (kb.overlay.Overlay) reach only the run given
them: a run beside it, in the same thread, reads the files. What a run's checks
spend (kb.run.Spending) is charged to the run given to the outermost check, and a
check nested inside it counts its stops there, not in another run's Spending.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.api import validate
from kb.equations import timeout
from kb.overlay import NONE, standing_in
from kb.run import Spending
from tests.conftest import source_yaml, write_tree


def _tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml()})


def test_a_record_standing_in_reaches_only_the_run_given_it(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    name = root / "sources" / "doc.yaml"
    broken = source_yaml().replace("status: draft", "status: nonsense").encode()
    overlay = standing_in(name, broken)
    found = validate(root, [name], remember=False, standing_in=overlay)
    assert [(f.code, f.location.line) for f in found.findings] == [("SC001", 5)]
    assert validate(root, remember=False).findings == []  # the same thread, no overlay
    assert validate(root, [name], remember=False, standing_in=NONE).findings == []
    assert name.read_text(encoding="utf-8") == source_yaml()  # nothing was written


def test_a_new_file_standing_in_is_listed_only_in_its_run(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    new = root / "sources" / "other.yaml"
    data = source_yaml("sources/other").encode()
    result = validate(root, [new], remember=False, standing_in=standing_in(new, data))
    assert any("other.yaml" in path for path in result.files)
    assert not any("other.yaml" in path for path in validate(root, remember=False).files)


def _swallowing() -> str:
    """A check whose inner check runs out of its steps and carries on (as decide_zero does)."""
    try:
        timeout.run_with_budget(lambda: sum(1 for _ in range(10_000)), 10)
    except timeout.CheckTimeout:
        return "carried on"
    return "finished"


def test_a_nested_stop_counts_in_the_run_of_the_check_that_holds_it() -> None:
    mine, other = Spending(), Spending()
    assert timeout.run_with_budget(_swallowing, 1_000_000, run=mine) == "carried on"
    assert (mine.stopped, other.stopped) == (1, 0)
    assert timeout.run_with_budget(_swallowing, 1_000_000) == "carried on"  # no run: not counted
    assert (mine.stopped, other.stopped) == (1, 0)
    assert timeout.budgets_stopped(None) == 0


def test_a_record_budget_is_charged_to_its_run_and_given_back() -> None:
    run = Spending()
    with timeout.record_budget(run, 50) as spent:
        assert spent is run and run.record_left == 50
        with pytest.raises(timeout.CheckTimeout, match="its budget of 50 steps"):  # the record's
            timeout.run_with_budget(lambda: sum(1 for _ in range(10_000)), 1_000, run=run)
        assert run.record_left is not None and run.record_left <= 0
    assert run.record_left is None and run.lost > 0 and run.stopped == 1
