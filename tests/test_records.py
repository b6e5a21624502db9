"""THE SHIPPED RECORDS MUST VALIDATE: `kb validate` on records/ exits 0.

This is the acceptance check of issue 2 ("kb validate exits 0 on the shipped
records"), run through the real `kb` console script from the repository root,
exactly as the README tells a user to run it. If it fails, a record (or a rule)
is wrong: fix the record, never this test.
"""

from __future__ import annotations

from tests.conftest import REPO, run_kb


def test_shipped_records_validate_clean() -> None:
    done = run_kb(["validate"], cwd=REPO, timeout=300)
    report = done.stdout + done.stderr
    assert done.returncode == 0, f"kb validate found problems in records/:\n{report}"
    assert done.stdout.rstrip().endswith("no findings")
    assert done.stderr == ""


def test_shipped_records_exist_for_every_seeded_kind() -> None:
    root = REPO / "records"
    folders = {p.relative_to(root).parts[0] for p in root.rglob("*.yaml")}
    assert {"flops", "hardware", "interconnects", "models", "sources"} <= folders
