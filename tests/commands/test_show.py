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

from tests.commands.test_cli import invoke
from tests.inprocess import kb_in_process

TRUTH = Path(__file__).resolve().parents[1] / "fixtures" / "truth"


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
    assert output.splitlines()[0] == (
        "# verdict: validated against 1 measurement; carries 1 erratum"
    )
    assert _line(output, "t_ring:").endswith("# consistent")
    assert _line(output, "- {rule: define").endswith("# derived (algebra, not measured)")
    assert _line(output, "- id: t-1mib").endswith(
        "# recomputed (computed by kb, not measured): 38.350080 (exact 119844/3125) us"
    )
    assert "# recomputed (computed by kb, not measured): slope" in _line(
        output, "- {id: affine-in-s"
    )
    assert _line(output, "- {id: twice-the-work").endswith(
        "# recomputed (computed by kb, not measured): factor 2"
    )
    assert yaml.safe_load(output)["id"] == "flops/ring"  # still valid YAML


def test_show_json_carries_the_verdict_and_every_check(tree: Path) -> None:
    code, output = invoke(tree, "show", "flops/ring", "--format", "json")
    assert code == 0, output
    document = json.loads(output)
    assert document["verdict"]["text"] == ("validated against 1 measurement; carries 1 erratum")
    assert (document["verdict"]["validated"], document["verdict"]["errata"]) == (1, 1)
    states = {(c["section"], c["id"]): c["state"] for c in document["checks"]}
    assert states == {
        ("equation", "t_ring"): "consistent",
        ("derivation", "ring.1"): "derived",
        ("claim", "t-1mib"): "recomputed",
        ("claim", "affine-in-s"): "recomputed",
        ("claim", "twice-the-work"): "recomputed",
        ("claim", "t-1mib-measured"): "validated",
        ("claim", "seed-t-no-latency"): "erratum",
    }
    kinds = {c["id"]: c["kind"] for c in document["checks"] if c["section"] == "claim"}
    assert kinds == {
        "t-1mib": "numeric",
        "affine-in-s": "scaling",
        "twice-the-work": "effect",
        "t-1mib-measured": "prediction",
        "seed-t-no-latency": "numeric",
    }
    (prediction,) = [c for c in document["checks"] if c["id"] == "t-1mib-measured"]
    assert {k: prediction[k] for k in ("computed", "claimed", "error", "band", "receipt")} == {
        "computed": "38.35 us",
        "claimed": "42.00 us",
        "error": "-8.7%",
        "band": "\u00b125%",
        "receipt": "receipts/ar",
    }


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


def _edit(tree: Path, relative: str, old: str, new: str) -> None:
    path = tree / "records" / relative
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


MEASURED = "latency: {value: 42, unit: us"


def test_a_measurement_moved_outside_the_band_fails_validate_naming_both_files(
    tree: Path,
) -> None:
    done = kb_in_process(["validate"], cwd=tree, env={"KB_CACHE_DIR": str(tree / "cache")})
    assert done.returncode == 0, done.stdout + done.stderr
    _edit(tree, "receipts/ar.yaml", MEASURED, "latency: {value: 60, unit: us")
    done = kb_in_process(["validate"], cwd=tree, env={"KB_CACHE_DIR": str(tree / "cache")})
    assert done.returncode == 1, done.stdout + done.stderr
    claim_line = _line_number(tree, "flops/ring.yaml", "- id: t-1mib-measured")
    receipt_line = _line_number(tree, "receipts/ar.yaml", "latency:")
    assert (
        f"records/flops/ring.yaml:{claim_line}:5: EQ018 claim t-1mib-measured is "
        "contradicted by its measurement: predicted 38.35 us, measured 60.00 us (receipts/ar), "
        "error -36.1% outside the band \u00b125%" in done.stdout
    )
    assert f"see: records/receipts/ar.yaml:{receipt_line}:" in done.stdout
    code, output = invoke(tree, "show", "flops/ring")
    assert output.splitlines()[0] == ("# verdict: contradicted by 1 measurement; carries 1 erratum")
    assert "# contradicted: predicted 38.35 us" in _line(output, "- id: t-1mib-measured")


def test_an_accepted_contradiction_passes_and_is_shown_red_with_its_reason(tree: Path) -> None:
    _edit(tree, "receipts/ar.yaml", MEASURED, "latency: {value: 60, unit: us")
    _edit(
        tree,
        "flops/ring.yaml",
        "    band: {rel: 0.25}\n",
        "    band: {rel: 0.25}\n    accepted: {reason: no launch overhead term}\n",
    )
    done = kb_in_process(["validate"], cwd=tree, env={"KB_CACHE_DIR": str(tree / "cache")})
    assert done.returncode == 0, done.stdout + done.stderr
    code, output = invoke(tree, "show", "flops/ring")
    assert output.splitlines()[0] == (
        "# verdict: contradicted by 1 measurement (1 accepted); carries 1 erratum"
    )
    assert _line(output, "- id: t-1mib-measured").endswith("; accepted: no launch overhead term")


def test_list_unvalidated_gives_each_flop_class_without_a_prediction(tree: Path) -> None:
    code, output = invoke(tree, "list", "--unvalidated")
    assert code == 0, output
    assert output == (
        "flops/idle  no receipt measures it yet\n"
        "1 of 2 flop classes without a prediction; 1 with one\n"
    )
    code, output = invoke(tree, "list", "--unvalidated", "--format", "json")
    assert json.loads(output) == {
        "unvalidated": [{"id": "flops/idle", "reason": "no receipt measures it yet"}],
        "count": 1,
        "flop_classes": 2,
    }


def _line_number(tree: Path, relative: str, start: str) -> int:
    lines = (tree / "records" / relative).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.lstrip().startswith(start))


ERRATUM = "the source says 18.35 us; kb computes 38.350080 (exact 119844/3125) us"


def test_an_erratum_is_shown_at_its_claim_and_at_each_statement_linked_to_it(tree: Path) -> None:
    code, output = invoke(tree, "show", "flops/ring")
    assert code == 0, output
    assert _line(output, "- id: seed-t-no-latency").endswith(f"# erratum: {ERRATUM}")
    linked = [
        line
        for line in output.splitlines()
        if line.lstrip().startswith("erratum: seed-t-no-latency")
    ]
    assert len(linked) == 2  # the scales_with item and the workaround
    assert all(line.endswith(f"# erratum seed-t-no-latency: {ERRATUM}") for line in linked)


def test_errata_and_contradictions_are_red_on_a_terminal(tree: Path) -> None:
    import os

    from click.testing import CliRunner

    from kb.cli import cli

    old = os.getcwd()
    os.chdir(tree)
    try:
        output = CliRunner().invoke(cli, ["show", "flops/ring"], color=True).output
    finally:
        os.chdir(old)
    assert f"\x1b[31m# erratum: {ERRATUM}\x1b[0m" in output
    assert f"\x1b[31m# erratum seed-t-no-latency: {ERRATUM}\x1b[0m" in output
    assert "\x1b[31m# recomputed" not in output


def test_an_erratum_that_stops_being_refuted_fails_validate(tree: Path) -> None:
    env = {"KB_CACHE_DIR": str(tree / "cache")}
    assert kb_in_process(["validate"], cwd=tree, env=env).returncode == 0
    _edit(
        tree,
        "flops/ring.yaml",
        "expect: {value: 18.35, unit: us",
        "expect: {value: 38.35, unit: us",
    )
    done = kb_in_process(["validate"], cwd=tree, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    line = _line_number(tree, "flops/ring.yaml", "- id: seed-t-no-latency")
    assert (
        f"records/flops/ring.yaml:{line}:5: EQ017 claim seed-t-no-latency: erratum no "
        "longer refuted: kb now computes 38.350080 (exact 119844/3125) us, as the source "
        "says (38.35 us)"
    ) in done.stdout
    code, output = invoke(tree, "show", "flops/ring")
    assert output.splitlines()[0] == "# verdict: validated against 1 measurement"


def test_an_erratum_link_to_no_claim_fails_validate(tree: Path) -> None:
    _edit(
        tree,
        "flops/ring.yaml",
        "    erratum: seed-t-no-latency\nworkarounds:",
        "    erratum: seed-t-gone\nworkarounds:",
    )
    done = kb_in_process(["validate"], cwd=tree, env={"KB_CACHE_DIR": str(tree / "cache")})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "EQ020 erratum link 'seed-t-gone' names no claim of this record" in done.stdout
    code, output = invoke(tree, "show", "flops/ring")
    assert "# erratum seed-t-gone: no such claim" in output
