"""A record kb cannot read is one root cause: its own finding, not a cascade elsewhere.

On a copy of the shipped records seeded with their result stores (`warm_copy`,
tests/warm.py: a seeded run reports what a cold run reports, tests/project/
test_warm_stores.py), run in process (tests/inprocess.py): the subject is the
findings, not the program's start.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.inprocess import kb_in_process


def _findings(records: Path, *extra: str) -> list[dict[str, object]]:
    command = ["validate", "--format", "json", "--ignore", "PR003"]
    done = kb_in_process([*command, *extra, "--root", str(records)], cwd=records.parent)
    assert done.returncode == 1, done.stdout + done.stderr
    return json.loads(done.stdout)["findings"]  # type: ignore[no-any-return]


def test_an_unreadable_accelerator_gives_its_own_finding_and_one_per_placement(
    warm_copy: Path,
) -> None:
    records = warm_copy
    h100 = records / "hardware" / "nvidia-h100-sxm.yaml"
    text = h100.read_text(encoding="utf-8")
    assert "bandwidth: {value: 3350, unit: GB/s" in text
    h100.write_text(text.replace("bandwidth: {value: 3350,", "bandwidth: {value: .nan,"), "utf-8")
    full = _findings(records, "--full")
    codes = Counter(str(f["code"]) for f in full)
    assert codes["LD014"] == 1 and set(codes) == {"LD014", "LG004"}, codes  # no RF001/EQ cascade
    root = next(f for f in full if f["code"] == "LD014")
    assert str(root["path"]).endswith("nvidia-h100-sxm.yaml") and root["line"] > 1
    assert all(
        "hardware/nvidia-h100-sxm cannot be read" in str(f["message"])
        for f in full
        if f["code"] == "LG004"
    )
    # the incremental run that follows a full one finds exactly the same
    assert _findings(records) == full


def test_a_yaml_syntax_error_is_one_finding_and_its_claims_read_unverified(
    warm_copy: Path,
) -> None:
    """LD004 in a bound record: no RF001 or EQ cascade, and `kb show` says unverified, why."""
    records = warm_copy
    h100 = records / "hardware" / "nvidia-h100-sxm.yaml"
    h100.write_text(h100.read_text(encoding="utf-8") + "title: [unclosed\n", "utf-8")
    full = _findings(records, "--full")
    codes = Counter(str(f["code"]) for f in full)
    assert codes["LD004"] == 1 and set(codes) == {"LD004", "LG004"}, codes
    assert _findings(records) == full
    done = kb_in_process(
        ["show", "flops/decode-kv-cache-read", "--format", "json"], cwd=records.parent
    )
    assert done.returncode == 0, done.stderr
    claims = [c for c in json.loads(done.stdout)["checks"] if c["section"] == "claim"]
    waiting = [c for c in claims if "hardware/nvidia-h100-sxm cannot be read" in c["detail"]]
    assert {c["id"] for c in waiting} >= {"cache-time-70b-b32-s8k", "fit-70b-8xh100"}
    assert {c["state"] for c in waiting} == {"unverified"}  # never "invalid": kb refuted nothing
    assert not [c for c in claims if c["state"] == "invalid"]
