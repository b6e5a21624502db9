"""`kb diff BASE [HEAD]` on a real two-commit git repository of records (golden files).

The base has a figure (flops/source-figure's arithmetic intensity, 4 FLOP/B), a
flop class whose claims bind it (one numeric claim, one erratum that must stay
refuted) and a source. The head corrects the figure to 8 FLOP/B with a version
bump: the numeric claim moves (4 -> 8) and becomes refuted, the erratum starts to
hold, and the findings say so. The golden files are what a reviewer reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from tests.conftest import HISTORY, git, git_repo_with, source_yaml

GOLDEN = Path(__file__).resolve().parent / "golden"


def _figure(value: int, version: int) -> str:
    history = HISTORY + (
        '  - {version: 2, date: "2026-12-01", change: "Intensity corrected."}\n'
        if version == 2
        else ""
    )
    return (
        "kind: flop_class\nid: flops/source-figure\ntitle: A figure\n"
        f"version: {version}\nstatus: draft\nhistory:\n{history}text: A phenomenon.\n"
        "arithmetic_intensity:\n  text: Its intensity.\n"
        f"  value: {{value: {value}, unit: FLOP/B, basis: derived, source: sources/doc}}\n"
    )


USER = """\
kind: flop_class
id: flops/user
title: Uses the figure
version: 1
status: draft
history:
  - {version: 1, date: "2026-11-30", change: First encoding.}
text: A phenomenon.
symbols:
  I: {meaning: intensity, unit: FLOP/B}
  k: {meaning: a count, unit: "1"}
  x: {meaning: twice the intensity, unit: FLOP/B}
equations:
  twice: {expr: "x = k*I"}
claims:
  - id: twice-the-figure
    kind: numeric
    of: twice
    bind:
      I: flops/source-figure#arithmetic_intensity.value
      k: {value: 2, unit: "1", basis: assumed, note: "doubling, chosen for the example"}
    expect: {value: 8, unit: FLOP/B, basis: derived, source: sources/doc}
  - id: source-says-sixteen
    kind: numeric
    of: twice
    bind:
      I: flops/source-figure#arithmetic_intensity.value
      k: {value: 2, unit: "1", basis: assumed, note: "doubling, chosen for the example"}
    expect: {value: 16, unit: FLOP/B, basis: derived, source: sources/doc}
    erratum: {source: sources/doc, reason: "the source doubled the figure twice"}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "records"
    files = {
        "sources/doc.yaml": source_yaml(),
        "flops/source-figure.yaml": _figure(4, 1),
        "flops/user.yaml": USER,
    }
    top = git_repo_with(root, files)
    (root / "flops" / "source-figure.yaml").write_text(_figure(8, 2), encoding="utf-8")
    git(top, "commit", "-q", "-am", "correct the intensity")
    monkeypatch.chdir(top)
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    return root


def _diff(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["diff", *args, "--root", "records"])
    return result.exit_code, result.output


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_golden(repo: Path, fmt: str) -> None:
    code, output = _diff("HEAD~1", "HEAD", "--format", fmt)
    assert code == 0, output
    golden = GOLDEN / f"intensity-corrected.{'md' if fmt == 'markdown' else 'txt'}"
    assert output == golden.read_text(encoding="utf-8")


def test_json_names_every_move(repo: Path) -> None:
    code, output = _diff("HEAD~1", "HEAD", "--format", "json")
    assert code == 0, output
    data = json.loads(output)
    assert data["changed"] == ["flops/source-figure"]
    assert data["figures"] == [
        {
            "record": "flops/source-figure",
            "field": "arithmetic_intensity.value",
            "old": {"value": 4, "unit": "FLOP/B", "basis": "derived", "source": "sources/doc"},
            "new": {"value": 8, "unit": "FLOP/B", "basis": "derived", "source": "sources/doc"},
        }
    ]
    moved = {row["id"]: row for row in data["moved"]}
    assert set(moved) == {"twice-the-figure", "source-says-sixteen"}
    assert (
        moved["twice-the-figure"]["old"]["state"],
        moved["twice-the-figure"]["new"]["state"],
    ) == (
        "recomputed",
        "refuted",
    )
    assert moved["twice-the-figure"]["old"]["computed"] == "8 FLOP/B"
    assert moved["twice-the-figure"]["new"]["computed"] == "16 FLOP/B"
    assert moved["source-says-sixteen"]["what"] == "erratum stopped holding"
    assert {f["code"] for f in data["findings_added"]} == {"EQ007", "EQ017"}
    assert data["findings_fixed"] == []


def test_working_tree_is_the_default_head(repo: Path) -> None:
    (repo / "flops" / "source-figure.yaml").write_text(_figure(4, 2), encoding="utf-8")
    code, output = _diff("HEAD", "--format", "json")
    assert code == 0, output
    moved = {row["id"]: row for row in json.loads(output)["moved"]}
    assert moved["twice-the-figure"]["new"]["state"] == "recomputed"
    assert json.loads(output)["head"] == "working tree"


def test_no_change_says_so(repo: Path) -> None:
    code, output = _diff("HEAD", "HEAD")
    assert code == 0
    assert "No change to the knowledge." in output


def test_unknown_revision_is_a_usage_error(repo: Path) -> None:
    code, output = _diff("no-such-rev", "HEAD")
    assert code == 2
    assert "no-such-rev" in output or "kb diff" in output


@pytest.mark.slow
def test_h100_bandwidth_change_moves_the_crossover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped_stores: Path
) -> None:
    """The shipped records: H100 HBM 3350 -> 3000 GB/s moves B* (proportional to 1/BW_hbm).

    From the shipped records' stores (tests/warm.py): the base is the shipped tree, and
    the head re-derives what the edit reaches, as after a user's first run."""
    import shutil

    from tests.conftest import SHIPPED_RECORDS
    from tests.warm import seed

    root = tmp_path / "records"
    shutil.copytree(SHIPPED_RECORDS, root)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    path = root / "hardware" / "nvidia-h100-sxm.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.count("bandwidth: {value: 3350, unit: GB/s") == 1
    path.write_text(text.replace("bandwidth: {value: 3350,", "bandwidth: {value: 3000,"))
    git(tmp_path, "commit", "-q", "-am", "head")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KB_CACHE_DIR", str(seed(shipped_stores, tmp_path / "cache")))
    code, output = _diff("HEAD~1", "HEAD", "--format", "json")
    assert code == 0, output
    data = json.loads(output)
    assert data["figures"][0]["field"] == "memory.bandwidth"
    moved = {(row["record"], row["id"]): row for row in data["moved"]}
    row = moved[("flops/sched-tensor-parallel-crossover", "b-star-tp8-alpha0")]
    old = float(row["old"]["computed"].split()[0])
    new = float(row["new"]["computed"].split()[0])
    assert new == pytest.approx(old * 3350 / 3000, rel=1e-6)  # B* = P*W/(2c(N-1)d*BW_hbm)
    assert (row["old"]["state"], row["new"]["state"]) == ("recomputed", "refuted")
    assert all(r["old"] != r["new"] for r in data["moved"])
