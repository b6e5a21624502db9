"""EQ027 as `kb lsp` runs it (scoped, verdicts kept between edits) says what a fresh full run says.

kb.rules.eq_claim_text_number_mismatch keeps each claim's verdict for the next run,
keyed by what it is computed from, and the engine re-checks only the files an edit
reaches. On random edits (fixed seed) of claim texts, of a literal a claim binds and
of the figure another record gives it, the engine's EQ027 findings on every file equal
a full `kb validate` of the tree with the buffers saved and no verdict kept.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from kb.api import validate
from kb.lsp.engine import Engine
from kb.rules import eq_claim_text_number_mismatch as eq027
from tests.conftest import source_yaml, write_tree
from tests.diff.test_knowledge_diff import USER, _figure

SEED = 20261206
STEPS = 16
# Few texts, so that a text comes back with other figures bound: a kept verdict must
# then be the fresh one (computed k*I is 8 to 24; I is 4, 6 or 8; k is 2 or 3; the
# first claim expects 8, 12 or 24: a text's number may agree with any of them).
TEXTS = ["The figure is 6.", "Twice 4 is 8 FLOP/B.", "It is 12, or 24 at most.", "16 of them."]


def _user(rng: random.Random) -> str:
    """flops/user with a random count, expected value and text on each claim."""
    text = USER.replace("{value: 2, unit:", f"{{value: {rng.choice([2, 3])}, unit:")
    text = text.replace("expect: {value: 8,", f"expect: {{value: {rng.choice([8, 12, 24])},")
    for claim in ("twice-the-figure", "source-says-sixteen"):
        said = rng.choice(TEXTS)
        text = text.replace(f"  - id: {claim}\n", f"  - id: {claim}\n    text: '{said}'\n")
    return text


def _eq027(findings: list, prefix: str) -> list[tuple[str, str, str, int, str]]:
    return [
        (
            f.location.path.removeprefix(prefix),
            f.location.pointer,
            f.code,
            f.location.offset,
            f.message,
        )
        for f in findings
        if f.code == eq027.CODE
    ]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    records = tmp_path / "records"
    write_tree(
        records,
        {
            "sources/doc.yaml": source_yaml(),
            "flops/source-figure.yaml": _figure(4, 1),
            "flops/user.yaml": USER,
            "flops/other.yaml": USER.replace("flops/user", "flops/other"),
        },
    )
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return records


def test_kept_verdicts_on_random_edits_equal_a_fresh_full_run(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(eq027, "_VERDICTS", {})  # this test's verdicts only
    rng = random.Random(SEED)
    engine = Engine(root)
    engine.snapshot()
    originals = {path: path.read_bytes() for path in root.rglob("*.yaml")}
    user, figure = root / "flops/user.yaml", root / "flops/source-figure.yaml"
    seen: list[int] = []
    edits = 0
    computed = 0
    mismatches = eq027._mismatches

    def counted(*args: Any) -> Any:
        nonlocal computed
        computed += 1
        return mismatches(*args)

    for _ in range(STEPS):
        buffers: dict[Path, bytes] = {}
        if rng.random() < 0.8:
            buffers[user] = _user(rng).encode()
        if not buffers or rng.random() < 0.6:
            buffers[figure] = _figure(rng.choice([4, 8, 6]), 1).encode()
        with monkeypatch.context() as counting:
            counting.setattr(eq027, "_mismatches", counted)
            checked = engine.check(buffers)
        fast = [f for name in checked.affected() for f in checked.findings(name)]
        for path, text in buffers.items():
            path.write_bytes(text)
        with monkeypatch.context() as fresh:
            fresh.setattr(eq027, "_key", lambda *args: None)  # no verdict kept or reused
            full = validate(root, remember=False).findings
        for path, text in originals.items():
            path.write_bytes(text)
        affected = {name.removeprefix("records/") for name in checked.affected()}
        expected = [row for row in _eq027(full, "records/") if row[0] in affected]
        assert sorted(_eq027(fast, "records/")) == sorted(expected), buffers.keys()
        unaffected = [row for row in _eq027(full, "records/") if row[0] not in affected]
        assert unaffected == []  # flops/other and the disk's own texts: no EQ027 anywhere
        seen.append(len(expected))
        edits += user in buffers
    # the edits reached both verdicts, and kept verdicts answered some of the claims
    assert min(seen) == 0 and max(seen) > 0, seen
    assert 0 < computed < 2 * edits, (computed, edits)
