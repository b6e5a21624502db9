"""README.md's counts and prediction table are what kb computes, not hand-written copies."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tests.conftest import REPO
from tests.shipped_outputs import ONE_WORKER, end_to_end_results


@ONE_WORKER
def test_the_readme_blocks_are_generated(repo_stores: Path) -> None:
    """On records/ in place, its claims' stores seeded from the run's one cold check
    (tests/warm.py `seed_repo`), as a user's earlier run leaves them: never a cold
    derivation of every claim because this test ran first on its worker. The end-to-end
    rows are the run's one cold pricing of the shipped records, kept in the project's
    store (tests/shipped_outputs.py), which the script reads as `kb list` does."""
    end_to_end_results()
    spec = importlib.util.spec_from_file_location("readme_facts", REPO / "scripts/readme_facts.py")
    assert spec is not None and spec.loader is not None
    facts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(facts)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    kb = facts.open_kb(REPO / "records")
    expected = facts.replace_blocks(readme, facts.generated(kb))
    assert readme == expected, "run `python scripts/readme_facts.py --write`"
