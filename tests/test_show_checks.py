"""kb show says what kb checked: the verdict on top, each check's state beside its line, JSON.

The records are tests/fixtures/truth (a ring all-reduce flop class, a receipt
and a source: fixture figures, not measurements).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.test_cli import invoke

TRUTH = Path(__file__).resolve().parent / "fixtures" / "truth"


def truth_tree(target: Path) -> Path:
    """Copy the fixture records to `target`/records; return `target`."""
    shutil.copytree(TRUTH, target / "records")
    return target


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    return truth_tree(tmp_path)


def _line(output: str, start: str) -> str:
    return next(line for line in output.splitlines() if line.lstrip().startswith(start))


def test_show_puts_the_verdict_first_and_each_state_beside_its_line(tree: Path) -> None:
    code, output = invoke(tree, "show", "flops/ring")
    assert code == 0, output
    assert output.splitlines()[0] == "# verdict: not validated"
    assert _line(output, "t_ring:").endswith("# consistent")
    assert _line(output, "- {rule: define").endswith("# derived")
    assert _line(output, "- id: t-1mib").endswith(
        "# recomputed: 38.350080 (exact 119844/3125) us")
    assert "# recomputed: slope" in _line(output, "- {id: affine-in-s")
    assert _line(output, "- {id: twice-the-work").endswith("# recomputed: factor 2")
    assert yaml.safe_load(output)["id"] == "flops/ring"  # still valid YAML


def test_show_json_carries_the_verdict_and_every_check(tree: Path) -> None:
    code, output = invoke(tree, "show", "flops/ring", "--format", "json")
    assert code == 0, output
    document = json.loads(output)
    assert document["verdict"]["text"] == "not validated"
    states = {(c["section"], c["id"]): c["state"] for c in document["checks"]}
    assert states == {("equation", "t_ring"): "consistent", ("derivation", "ring.1"): "derived",
                      ("claim", "t-1mib"): "recomputed", ("claim", "affine-in-s"): "recomputed",
                      ("claim", "twice-the-work"): "recomputed"}
    kinds = {c["id"]: c["kind"] for c in document["checks"] if c["section"] == "claim"}
    assert kinds == {"t-1mib": "numeric", "affine-in-s": "scaling", "twice-the-work": "effect"}


def test_a_record_without_a_model_has_no_verdict(tree: Path) -> None:
    code, output = invoke(tree, "show", "receipts/ar", "--format", "json")
    assert code == 0, output
    assert "verdict" not in json.loads(output)
    code, output = invoke(tree, "show", "receipts/ar")
    assert not output.startswith("# verdict")


def test_unverified_shows_its_reason(tree: Path) -> None:
    ring = tree / "records" / "flops" / "ring.yaml"
    ring.write_text(ring.read_text().replace('alpha: "2*alpha", S: "2*S"', 'S: "2*S"'))
    code, output = invoke(tree, "show", "flops/ring")
    assert code == 0, output
    assert "# unverified (factor " in _line(output, "- {id: twice-the-work")
    assert "depends on the operating point)" in _line(output, "- {id: twice-the-work")
