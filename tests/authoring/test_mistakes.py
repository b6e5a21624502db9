"""The author-mistake corpus (tests/authoring/mistakes.yaml): one mistake, one finding.

Each mistake is applied to a copy of records (per push a sample of the shipped ones:
tests/authoring/corpus.py `sample_roots`; all of them with `KB_FULL=1`) and checked with the real
command line (`kb validate --format json`): it must add exactly one finding, with the
expected code, at the mistake's line (and column where given), and its message and
hint must name what is wrong and the fix.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.authoring.corpus import added_findings, expected_line, mistakes, sample_roots
from tests.conftest import SHIPPED_RECORDS
from tests.sample import full, sample_copy
from tests.warm import seed

CORPUS = mistakes()


@pytest.fixture(scope="module")
def records_copy(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """Per push the sample of `sample_roots` (~200 records: why it holds what the shipped
    tree holds is in its docstring), checked cold; with `KB_FULL=1` the shipped records
    from the stores their cold check left (tests/warm.py)."""
    root = tmp_path_factory.mktemp("authoring") / "records"
    if not full():
        return sample_copy(root, sample_roots())
    shutil.copytree(SHIPPED_RECORDS, root)
    seed(request.getfixturevalue("shipped_stores"), root.parent / "cache")  # the cache below
    return root


@pytest.fixture(autouse=True)
def _shared_cache(
    records_copy: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(records_copy.parent / "cache"))
    monkeypatch.chdir(records_copy.parent)


def test_corpus_is_large_and_names_are_unique() -> None:
    names = [m["name"] for m in CORPUS]
    assert len(names) >= 40
    assert len(set(names)) == len(names)


@pytest.mark.slow
@pytest.mark.parametrize("mistake", CORPUS, ids=[m["name"] for m in CORPUS])
def test_one_mistake_one_finding(mistake: dict[str, Any], records_copy: Path) -> None:
    found, text, start = added_findings(records_copy, mistake)
    shown = "\n".join(f"{f['code']} {f['path']}:{f['line']} {f['message']}" for f in found)
    assert len(found) == 1, f"{mistake['name']} gave {len(found)} new findings:\n{shown}"
    finding = found[0]
    assert finding["code"] == mistake["code"], shown
    assert finding["line"] == expected_line(mistake, text, start), shown
    if "col" in mistake:
        assert finding["col"] == mistake["col"], shown
    for words in mistake.get("message_has", []):
        assert words in finding["message"], f"{words!r} not in {finding['message']!r}"
    for words in mistake.get("hint_has", []):
        assert words in finding["hint"], f"{words!r} not in hint {finding['hint']!r}"
    assert finding["hint"], "every finding of the corpus says what to do"
