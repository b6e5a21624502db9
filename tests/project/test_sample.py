"""The shipped sample (tests/sample.py) is what the tests that run on it say it is."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kb.api import open_kb, validate
from tests.sample import ROOTS, sample_copy, sample_files

CLAIM_KINDS = {"numeric", "scaling", "prediction", "effect", "bound"}


def test_the_sample_is_small_clean_and_closed_under_references(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    root = sample_copy(tmp_path / "records")
    assert len(sample_files()) == len(list(root.rglob("*.yaml"))) < 120
    result = validate(root, remember=False)
    assert [f"{f.location} {f.code} {f.message}" for f in result.findings] == []
    kb = open_kb(root)
    assert all(kb.get(ref.target.split("#")[0]) is not None for ref in kb.references)
    for record_id in ROOTS:
        assert kb.get(record_id) is not None, record_id
    flops = kb.of_kind("flop_class")
    kinds = Counter(c["kind"] for f in flops for c in f.data.get("claims", []))
    assert set(kinds) == CLAIM_KINDS, kinds  # every kind of claim is checked in the sample
    assert any(f.data.get("derivations") for f in flops)
    present = {r.kind for r in kb}
    assert {"flop_class", "placement", "accelerator", "interconnect", "model", "source"} <= present
    assert kb.get("hardware/nvidia-h100-sxm") is not None  # the README's H100 edit applies
