"""The GitHub Action's commands, run here as the action would run them (from the wheel)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from tests.conftest import REPO
from tests.install.conftest import break_three_ways, run


def action_step(name: str, **inputs: str) -> tuple[str, dict[str, str]]:
    """The `run:` script of the action's step `name` and its `env:`, inputs filled in.

    Inputs reach the script only through `env:` (GitHub's hardening guide): the script
    itself must hold no `${{ ... }}` expression.
    """
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    values = {key: spec.get("default", "") for key, spec in action["inputs"].items()}
    values.update(inputs)
    (step,) = [s for s in action["runs"]["steps"] if s.get("name") == name]
    assert "${{" not in step["run"], step["run"]
    env = {}
    for key, expression in step.get("env", {}).items():
        match = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", expression)
        assert match, expression
        env[key] = values[match.group(1)]
    return step["run"], env


def run_step(installed: Path, cwd: Path, name: str, **inputs: str):  # type: ignore[no-untyped-def]
    """Run the step's script with bash as the runner would, `kb` from the installed wheel."""
    script, env = action_step(name, **inputs)
    path = f"{installed}{os.pathsep}{os.environ.get('PATH', '')}"
    return run(["bash", "-c", script], cwd=cwd, env={**env, "PATH": path})


def test_the_action_annotates_findings(installed: Path, outside: Path) -> None:
    break_three_ways(outside / "records")
    done = run_step(installed, outside, "kb validate")
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert any("file=records/hardware/nvidia-h100-sxm.yaml,line=" in e for e in errors)
    assert any("SC001" in e for e in errors) and any("RF001" in e for e in errors)


def test_the_action_passes_a_clean_tree(installed: Path, outside: Path) -> None:
    done = run_step(installed, outside, "kb validate", args="--fail-on error")
    assert done.returncode == 0, done.stdout + done.stderr


def test_inputs_are_words_never_shell(installed: Path, outside: Path) -> None:
    # an input that would run a command if the action expanded it into the script
    marker = outside / "pwned"
    done = run_step(installed, outside, "kb validate", args=f"--fail-on error $(touch {marker})")
    assert not marker.exists()
    assert done.returncode == 2 and "$(touch" in done.stderr, done.stdout + done.stderr
    done = run_step(installed, outside, "kb validate", root="records; touch " + str(marker))
    assert not marker.exists() and done.returncode == 2, done.stdout + done.stderr


def test_a_site_published_under_a_url_gives_its_schemas_ids_there(
    installed: Path, outside_sample: Path
) -> None:
    outside = outside_sample  # the schemas are written whatever the records
    done = run(
        [
            str(installed / "kb"),
            "build",
            "--no-plans",
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
