"""A "did you mean" costs bounded work whatever the record it searches (issue 37, T3-05).

A 1.4 MB record of 99,000 keys at an id other records bind made a cold `kb validate`
spend 14 s of CPU (56 s with 20 binders, bench/suggest_worst.py) comparing each failing
binding with every field path. The test counts the work (difflib comparisons and
candidates scored), not time: the counts are the same on any machine.
"""

from __future__ import annotations

import sys
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from kb import suggest
from kb.api import validate
from kb.equations.bind import field_paths

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from suggest_worst import binder, huge_record  # noqa: E402

KEYS, BINDERS = 99_000, 4


class _Counted(SequenceMatcher):  # type: ignore[type-arg]
    made = 0

    def ratio(self) -> float:
        _Counted.made += 1
        return super().ratio()


def test_the_99000_key_record_at_a_bound_id_costs_bounded_suggestions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "records"
    (root / "sources").mkdir(parents=True)
    (root / "flops").mkdir()
    (root / "sources" / "huge.yaml").write_text(huge_record(KEYS), encoding="utf-8")
    for index in range(BINDERS):
        (root / "flops" / f"binder-{index}.yaml").write_text(binder(index) + "\n", "utf-8")
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(suggest, "SequenceMatcher", _Counted)
    scored: list[int] = []
    real_shortlist = suggest._shortlist

    def shortlist(typed: str, pool: list[str], by_name: bool) -> list[str]:
        chosen = real_shortlist(typed, pool, by_name)
        scored.append(len(chosen))
        return chosen

    monkeypatch.setattr(suggest, "_shortlist", shortlist)
    _Counted.made = 0
    findings = validate(root, remember=False).findings
    unresolved = [f for f in findings if f.code == "EQ010"]
    assert len(unresolved) == BINDERS  # each binding still gets its finding and a hint
    assert all(f.hint for f in unresolved)
    assert scored and max(scored) <= suggest.MAX_CANDIDATES
    # every comparison is counted against a cap per suggestion: + whole-string ratios
    assert _Counted.made <= len(scored) * (suggest.MAX_COMPARISONS + suggest.MAX_CANDIDATES)
    print(f"{len(scored)} suggestions, {_Counted.made} comparisons, {max(scored)} candidates")


def test_a_field_walk_stops_at_its_cap() -> None:
    data = {f"k{i:05d}": {"value": i, "unit": "1"} for i in range(KEYS)}
    paths = field_paths(data)
    assert len(paths) == suggest.MAX_PATHS
    assert paths[:3] == ["k00000", "k00000.value", "k00000.unit"]  # depth first, in order


def test_a_close_name_among_many_is_still_found_within_the_caps() -> None:
    known = [f"k{i:05d}" for i in range(KEYS)] + ["memory.bandwidth"]
    work = [0]
    assert suggest.closest("memory.bandwith", known) == "memory.bandwidth"
    suggest.ranked_matches("memory.bandwith", known, work=work)
    assert 0 < work[0] <= suggest.MAX_COMPARISONS + suggest.MAX_CANDIDATES


def test_a_name_of_many_long_words_is_compared_by_its_first_words() -> None:
    typed = "-".join("w" * 500 + str(i) for i in range(500))
    known = ["-".join("w" * 500 + str(i) for i in range(3))]
    work = [0]
    suggest.ranked_matches(typed, known, work=work)
    assert work[0] <= suggest.MAX_WORDS * suggest.MAX_WORDS + 1
