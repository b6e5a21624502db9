"""The GitHub Action's commands, run here as the action would run them (from the wheel)."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from tests.conftest import REPO
from tests.install.conftest import break_three_ways, run


def action_command(name: str, **inputs: str) -> list[str]:
    """The `run:` line of the action's step `name`, its inputs filled in (defaults otherwise)."""
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    values = {key: spec.get("default", "") for key, spec in action["inputs"].items()}
    (step,) = [s for s in action["runs"]["steps"] if s.get("name") == name]
    line = step["run"]
    for key, value in {**values, **inputs}.items():
        line = line.replace("${{ inputs." + key + " }}", value)
    assert "${{" not in line, line
    return shlex.split(line)


def test_the_action_annotates_findings(installed: Path, outside: Path) -> None:
    break_three_ways(outside / "records")
    command = action_command("kb validate")
    assert command[:2] == ["kb", "validate"]
    done = run([str(installed / "kb"), *command[1:]], cwd=outside)
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert any("file=records/hardware/nvidia-h100-sxm.yaml,line=" in e for e in errors)
    assert any("SC001" in e for e in errors) and any("RF001" in e for e in errors)


def test_the_action_passes_a_clean_tree(installed: Path, outside: Path) -> None:
    command = action_command("kb validate", args="--fail-on error")
    done = run([str(installed / "kb"), *command[1:]], cwd=outside)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_site_published_under_a_url_gives_its_schemas_ids_there(
    installed: Path, outside: Path
) -> None:
    done = run(
        [
            str(installed / "kb"),
            "build",
            "--out",
            "public",
            "--site-url",
            "https://example.org/kb/",
        ],
        cwd=outside,
    )
    assert done.returncode == 0, done.stderr
    text = (outside / "public/schemas/accelerator.schema.json").read_text(encoding="utf-8")
    assert '"$id": "https://example.org/kb/schemas/accelerator.schema.json"' in text
