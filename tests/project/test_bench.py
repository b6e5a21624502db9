"""The bench tools run end to end: the corpus is valid and deterministic, the runner prints.

No assertion here is about time: speed targets are measured by bench/run.py
and written down in BENCHMARKS.md.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kb.api import open_kb, validate
from tests.sample import full, sample_copy
from tests.warm import seed

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import make_corpus  # noqa: E402


def digest(folder: Path) -> str:
    hashed = hashlib.sha256()
    for path in sorted(folder.rglob("*.yaml")):
        hashed.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return hashed.hexdigest()


def test_the_corpus_is_deterministic(tmp_path: Path) -> None:
    make_corpus.write_corpus(60, tmp_path / "a")
    make_corpus.write_corpus(60, tmp_path / "b")
    assert digest(tmp_path / "a") == digest(tmp_path / "b")


def test_the_corpus_has_every_kind_and_validates_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    counts = make_corpus.write_corpus(120, tmp_path / "corpus")
    assert set(counts) == set(make_corpus.KIND_OF) and min(counts.values()) >= 1
    result = validate(tmp_path / "corpus" / "records", remember=False)
    assert [f"{f.location} {f.code} {f.message}" for f in result.findings] == []
    kb = open_kb(tmp_path / "corpus" / "records")
    assert len(kb) == 120
    claims = [c for r in kb.of_kind("flop_class") for c in r.data["claims"]]
    assert claims and all(
        c["bind"]["BW_hbm"].startswith("hardware/") for c in claims if c["kind"] == "numeric"
    )


def test_the_runner_refuses_to_replace_a_folder_that_is_not_a_corpus(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(SystemExit):
        make_corpus.write_corpus(20, tmp_path)
    assert (tmp_path / "precious.txt").read_text() == "keep me"


@pytest.mark.slow
def test_quick_run_prints_its_table(tmp_path: Path) -> None:
    """Per push: N = 40 and the start-up table on the shipped sample (tests/sample.py).

    The runner's code is the same for every N and every tree: N only sets how many
    records make_corpus writes, and 40 already writes every kind
    (test_forty_records_have_every_kind), so every step, check-jsonschema's batch per
    kind included, runs; the start-up table validates whatever tree it is given, and
    the sample validates clean as the shipped tree does (tests/project/test_sample.py).
    `KB_FULL=1` runs the documented `--quick` (N = 200, the shipped records/).
    """
    if full():
        n, extra = 200, []
    else:
        n, extra = 40, ["--sizes", "40", "--records", str(sample_copy(tmp_path / "sample"))]
    run = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run.py"), "--quick", "--work", str(tmp_path)]
        + extra,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert f"N = {n} records" in out
    for step in (
        "read files",
        "parse (CSafeLoader, 1 process)",
        "kb schema stage",
        "kb validate, cold",
        "kb validate, warm",
        "kb validate, 1 changed",
        "kb build, cold",
        "kb build, 1 changed",
        "kb build with the plans (default), cold",
    ):
        assert step in out
    assert "--no-plans, as a8304ab's build (no plans)" in out  # like with like
    if shutil.which("check-jsonschema"):
        assert "check-jsonschema (kb schemas)" in out
    assert "kb validate, cold / parse (paired):" in out
    assert f"checked {n} records" in out
    start = "kb validate (shipped records/), cold" if full() else "kb validate ("
    assert start in out and "exit 0" in out.split(start, 1)[1].splitlines()[0], out


def test_forty_records_have_every_kind(tmp_path: Path) -> None:
    """The premise of the per-push quick run: a corpus of 40 has every kind of record."""
    counts = make_corpus.write_corpus(40, tmp_path / "corpus")
    assert set(counts) == set(make_corpus.KIND_OF) and min(counts.values()) >= 1


def test_prose_numbers_counts_what_pr003_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped_stores: Path
) -> None:
    """The check from the shipped records' stores (tests/warm.py), not a cold run of its own."""
    import prose_numbers

    monkeypatch.setenv("KB_CACHE_DIR", str(seed(shipped_stores, tmp_path / "cache")))
    found = prose_numbers.count(REPO / "records")
    flagged = [f for f in validate(REPO / "records", remember=False).findings if f.code == "PR003"]
    assert sum(n for (_, field), n in found.items() if field != prose_numbers.SKIPPED) == len(
        flagged
    )
    assert all(
        found[(folder, "summary")] == 0 for folder in ("hardware", "interconnects", "receipts")
    )
    assert "| **flagged (PR003)** |" in prose_numbers.table(found)


def test_lines_counts_code_not_docstrings_comments_or_blanks() -> None:
    import lines

    text = '''"""A module docstring
on two lines."""

# a comment
import os  # a trailing comment keeps its line


def f(x: int) -> int:
    """One docstring line."""
    text = """a string that is
    not a docstring"""
    return x + len(text)
'''
    assert lines.code_lines(text) == 5  # import, def, two lines of the string, return


def test_lines_classifies_every_module_and_reports_absent_ones(tmp_path: Path) -> None:
    import lines

    assert all(
        kind in (lines.SPEED_ONLY, lines.MOSTLY, lines.NOT_SPEED)
        for kind, _ in lines.MODULES.values()
    )
    assert all(why for _, why in lines.MODULES.values())
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "store.py").write_text("x = 1\n\n")
    table = lines.report(tmp_path)
    assert "kb/store.py                         2      1  speed-only" in table
    assert "kb/incremental.py              absent" in table


def test_the_site_parts_table_names_every_part_and_times_the_pages(tmp_path: Path) -> None:
    """`bench/site_bench.py --parts` (issue 18: the build's CPU by part, reproducible)."""
    import site_parts

    make_corpus.write_corpus(60, tmp_path / "corpus")
    rows = site_parts._in_child(tmp_path / "corpus" / "records")
    labels = [label for label, _, _, _ in rows]
    assert labels[:2] == ["validation (kb build's check)", "site (build)"]
    assert len(labels) == 2 + sum(1 for label, *_ in site_parts.PARTS if label)
    calls = {label: count for label, _, count, _ in rows}
    assert calls["record contexts (record_context)"] == 60  # every record's page, timed
    assert calls["record pages, Jinja (record.html)"] == 60
    assert all(cpu >= 0 for _, cpu, _, _ in rows)
