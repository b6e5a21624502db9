"""`kb new flop_class`: the worked example is valid once its placeholders are filled."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from kb.cli import cli

# What an author types at each placeholder, by the words its line starts with.
FILLS = {
    "title:": "title: Example read",
    "change:": "change: First encoding.",
    "text:": "text: An example read.",
    "BW:": "BW: hardware/nvidia-h100-sxm#memory.bandwidth",
    # 16 GB / (8 x 3350 GB/s) = 0.597 ms
    "value:": "value: 0.597",
    "source:": "source: sources/arxiv-megatron-lm-sc21",
    "measured:": "measured: receipts/azure-nd-h100-v5-hbm-bandwidth#results.3.value",
}


def _fill(text: str) -> str:
    lines = []
    for line in text.splitlines():
        match = re.match(r"^(\s*)(\S+) ~  # TODO:", line)
        if match:
            line = match.group(1) + FILLS[match.group(2)]
        lines.append(line)
    return "\n".join(lines) + "\n"


def _validate(root: Path, path: Path) -> list[dict[str, object]]:
    result = CliRunner().invoke(
        cli, ["validate", "--format", "json", "--root", str(root), str(path)]
    )
    findings: list[dict[str, object]] = json.loads(result.stdout)["findings"]
    return findings


def test_flop_class_scaffold_flags_only_placeholders_then_validates_clean(
    tmp_path: Path, monkeypatch: object, warm_copy: Path
) -> None:
    root = warm_copy  # tmp_path / "records", its .kb-cache seeded (tests/warm.py)
    result = CliRunner().invoke(cli, ["new", "flops", "flops/example-read", "--root", str(root)])
    assert result.exit_code == 0, result.output
    path = root / "flops" / "example-read.yaml"
    text = path.read_text(encoding="utf-8")
    for section in ("symbols:", "equations:", "derivations:", "claims:", "kind: scaling"):
        assert section in text
    todo_lines = [n + 1 for n, line in enumerate(text.splitlines()) if "~  # TODO:" in line]
    findings = _validate(root, path)
    assert sorted(f["line"] for f in findings) == todo_lines, findings  # one per placeholder
    assert all("placeholder left unfilled" in str(f["message"]) for f in findings)
    path.write_text(_fill(text), encoding="utf-8")
    assert _validate(root, path) == []


def test_kind_aliases_are_the_same_everywhere(tmp_path: Path) -> None:
    root = tmp_path / "records"
    root.mkdir()
    for alias in ("flop_class", "flops"):
        record = f"flops/x-{alias.replace('_', '-')}"
        result = CliRunner().invoke(cli, ["new", alias, record, "--root", str(root)])
        assert result.exit_code == 0, result.output
        listed = CliRunner().invoke(cli, ["list", "--kind", alias, "--root", str(root)])
        assert record in listed.output


def test_every_kind_scaffold_reports_only_its_placeholders(warm_copy: Path) -> None:
    from kb.model import FOLDER_BY_KIND

    root = warm_copy  # tmp_path / "records", its .kb-cache seeded (tests/warm.py)
    for kind, folder in sorted(FOLDER_BY_KIND.items()):
        record = f"{folder}/x-scaffold"
        result = CliRunner().invoke(cli, ["new", kind, record, "--root", str(root)])
        assert result.exit_code == 0, result.output
        path = root / f"{record}.yaml"
        text = path.read_text(encoding="utf-8")
        todo = sorted(n + 1 for n, line in enumerate(text.splitlines()) if "~  # TODO:" in line)
        findings = _validate(root, path)
        # every finding is at a placeholder (a schema branch may report only its first one)
        assert findings and {f["line"] for f in findings} <= set(todo), (kind, findings)
        assert all("placeholder left unfilled" in str(f["message"]) for f in findings), kind
        path.unlink()
