"""A composed placement kb cannot derive: one located LG004 per cause, no cascade, no traceback.

The records are the passing case of tests/rules/cases/measured_term_disagrees.yaml (a
tiny model, stub flop classes, one receipt), edited one way per test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kb.cli import cli

CASES = Path(__file__).resolve().parents[1] / "rules" / "cases" / "measured_term_disagrees.yaml"


def _tree(tmp_path: Path, edit: tuple[str, str, str]) -> Path:
    files = yaml.safe_load(CASES.read_text(encoding="utf-8"))["cases"][
        "measured_useful_within_the_band"
    ]["files"]
    path, old, new = edit
    assert old in files[path]
    files[path] = files[path].replace(old, new)
    root = tmp_path / "records"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (("models/tiny.yaml", "  kv_heads: 2\n", ""), 13, "geometry.kv_heads"),
        (
            ("placements/p.yaml", "flops/decode-kv-cache-read, ", ""),
            14,
            "evaluates flops/decode-kv-cache-read (kv_tok); name it in composed_from",
        ),
        (
            ("placements/p.yaml", "  degrees: {tp: 1}\n  useful", "  degrees: {tp: 2}\n  useful"),
            22,
            "tp*pp*dp = 2*1*1 = 2, but the option has 1 devices",
        ),
        (
            (
                "flops/decode-kv-cache-read.yaml",
                "kv_tok = 2*L*n_kv*h_d*b",
                "kv_tok = 2*L*n_kv*h_d*b*q",
            ),
            22,
            "flops/decode-kv-cache-read kv_tok",
        ),
    ],
)
def test_each_cause_is_one_located_finding(
    tmp_path: Path, edit: tuple[str, str, str], line: int, message: str
) -> None:
    root = _tree(tmp_path, edit)
    result = CliRunner().invoke(cli, ["ledger", "placements/p", "--root", str(root)])
    assert result.exit_code == 1, result.output
    findings = [x for x in result.output.splitlines() if " LG004 " in x]
    assert len(findings) == 1, result.output
    assert f"placements/p.yaml:{line}:" in findings[0], findings[0]
    assert message in findings[0]
    assert "Traceback" not in result.output
