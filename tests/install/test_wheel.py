"""The installed wheel, outside the repository: it checks everything the checkout checks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.inprocess import kb_in_process
from tests.install.conftest import break_three_ways, run
from tests.sample import full
from tests.warm import seed


def kb(installed: Path, cwd: Path, *args: str, **env: str):  # type: ignore[no-untyped-def]
    return run([str(installed / "kb"), *args], cwd=cwd, env=env)


def test_a_clean_tree_passes(installed: Path, outside: Path) -> None:
    # PR003 (numbers in prose) is held by tests/project/test_records.py
    done = kb(installed, outside, "validate", "--ignore", "PR003")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no findings" in done.stdout
    assert f"checked {len(list((outside / 'records').rglob('*.yaml')))} records" in done.stdout


def test_schema_reference_and_equation_errors_are_found(installed: Path, outside: Path) -> None:
    where = break_three_ways(outside / "records")
    done = kb(installed, outside, "validate", "--format", "json")
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    located = {(f["code"][:2], f["path"], f["line"]) for f in findings}
    for family, (path, line) in where.items():
        assert any(c == family and p == path and ln == line for c, p, ln in located), family
    refuted = [
        f for f in findings if f["code"].startswith("EQ") and f["path"].startswith("records/flops/")
    ]
    # the HBM edit refutes claims elsewhere: in 3+ flop classes of the shipped tree, in the
    # sample's one (flops/decode-kv-cache-read binds the H100: tests/install/test_user_records.py)
    assert len({f["path"] for f in refuted}) >= (3 if full() else 1)
    assert all(f["line"] > 0 for f in refuted)


def test_the_wheel_reports_exactly_what_the_checkout_reports(
    installed: Path, outside: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The wheel from the stores its own code made on the clean tree (`wheel_stores`),
    re-deriving what the edits reach: a seeded run reports what a cold run reports
    (tests/project/test_warm_stores.py). The checkout's run is in process
    (tests/inprocess.py), with this checkout's code: cold on the sample per push (~1
    CPU-s), from `shipped_stores` on the shipped tree (KB_FULL=1)."""
    break_three_ways(outside / "records")
    wheel = kb(installed, outside, "validate", "--full", "--format", "json")
    cache = tmp_path / "checkout-cache"
    if full():
        seed(request.getfixturevalue("shipped_stores"), cache)
    checkout = kb_in_process(
        ["validate", "--full", "--format", "json"],
        cwd=outside,
        env={"KB_CACHE_DIR": str(cache)},
    )
    assert checkout.returncode == wheel.returncode == 1, checkout.stderr + wheel.stderr
    assert json.loads(wheel.stdout) == json.loads(checkout.stdout)


def test_the_commands_work_from_the_wheel(installed: Path, outside_sample: Path) -> None:
    """On the shipped sample (tests/sample.py): every template, asset and schema of the
    site is written whatever the records, and each command runs on a record it holds."""
    outside = outside_sample
    new = kb(installed, outside, "new", "source", "sources/my-notes")
    assert new.returncode == 0, new.stderr
    assert (outside / "records/sources/my-notes.yaml").is_file()
    (outside / "records/sources/my-notes.yaml").unlink()
    built = kb(installed, outside, "build", "--out", "site")
    assert built.returncode == 0, built.stderr
    for page in (
        "index.html",
        "static/style.css",
        "methodology.html",
        "schemas/flop_class.schema.json",
        "explore/index.html",  # the default build's planner pages (kb build --no-plans: none)
        "static/explore.js",
        "plans/llama-2-7b/nvidia-h100-sxm-8x1.html",
    ):
        assert (outside / "site" / page).is_file(), page
    assert "Compute-placement tax" in (outside / "site/methodology.html").read_text()
    calc = kb(
        installed,
        outside,
        "calc",
        "flops/decode-kv-cache-read",
        "--claim",
        "cache-time-70b-b32-s8k",
    )
    assert calc.returncode == 0 and calc.stdout.strip(), calc.stderr
    ledger = kb(
        installed, outside, "ledger", "placements/llama-3.1-405b-one-h200-node-vs-two-h100-nodes"
    )
    assert ledger.returncode == 0 and "feasib" in ledger.stdout.lower(), ledger.stderr
    show = kb(installed, outside, "show", "hardware/nvidia-h100-sxm")
    assert show.returncode == 0 and "nvidia-h100-sxm" in show.stdout, show.stderr


def test_the_cache_ignores_itself(installed: Path, outside: Path) -> None:
    assert kb(installed, outside, "validate").returncode == 0
    assert (outside / ".kb-cache/.gitignore").read_text().splitlines()[-1] == "*"


def test_a_missing_packaged_schema_stops_kb(installed: Path, outside: Path) -> None:
    (site,) = installed.parent.glob("lib/python*/site-packages/kb/schemas")
    defs = site / "defs.schema.json"
    aside = site / "defs.schema.json.aside"
    os.replace(defs, aside)
    try:
        done = kb(installed, outside, "validate", "--full")
    finally:
        os.replace(aside, defs)
    assert done.returncode == 2
    assert done.stderr.startswith("kb: schemas missing from ") and "defs.schema.json" in done.stderr
    assert "Traceback" not in done.stderr
