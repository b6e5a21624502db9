"""Exported schemas work in any repository: plain check-jsonschema, no --base-uri needed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import SHIPPED_RECORDS
from tests.install.conftest import edit, run

CASES = [
    ("hardware/nvidia-h100-sxm", "accelerator"),
    ("flops/sched-tensor-parallel-crossover", "flop_class"),
    ("placements/tp-llama-3.1-70b-h100-tp4-vs-tp8", "placement"),
]


@pytest.fixture
def exported(installed: Path, tmp_path: Path) -> Path:
    done = run([str(installed / "kb"), "schemas", "export", "schemas"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path / "schemas"


@pytest.mark.parametrize(("record", "kind"), CASES)
def test_check_jsonschema_accepts_shipped_records(exported: Path, record: str, kind: str) -> None:
    target = exported.parent / "r.yaml"
    shutil.copy(SHIPPED_RECORDS / f"{record}.yaml", target)
    done = run(
        [
            shutil.which("check-jsonschema") or "check-jsonschema",
            "--schemafile",
            str(exported / f"{kind}.schema.json"),
            str(target),
        ],
        cwd=exported.parent,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_jsonschema_finds_a_schema_error_through_a_relative_ref(exported: Path) -> None:
    target = exported.parent / "h100.yaml"
    shutil.copy(SHIPPED_RECORDS / "hardware/nvidia-h100-sxm.yaml", target)
    edit(target, r"^(  bandwidth: \{value: )3350,", r'\g<1>"fast",')  # a $defs quantity
    done = run(
        [
            shutil.which("check-jsonschema") or "check-jsonschema",
            "--schemafile",
            str(exported / "accelerator.schema.json"),
            str(target),
        ],
        cwd=exported.parent,
    )
    assert done.returncode == 1 and "fast" in done.stdout, done.stdout + done.stderr


def test_export_with_a_base_url_sets_ids(installed: Path, tmp_path: Path) -> None:
    done = run(
        [
            str(installed / "kb"),
            "schemas",
            "export",
            "out",
            "--base-url",
            "https://example.org/kb/schemas/",
        ],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    schema = json.loads((tmp_path / "out/defs.schema.json").read_text(encoding="utf-8"))
    assert schema["$id"] == "https://example.org/kb/schemas/defs.schema.json"
    plain = run([str(installed / "kb"), "schemas", "export", "plain"], cwd=tmp_path)
    assert plain.returncode == 0
    assert "$id" not in json.loads((tmp_path / "plain/defs.schema.json").read_text())
