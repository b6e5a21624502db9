"""kb.kinds.views: one accessor, views only after the schema stage and only for what it passed."""

from __future__ import annotations

import pytest

from kb.checker import schema_stage
from kb.kinds import VIEWS, views
from kb.model import KnowledgeBase, Record
from kb.run import StageNotRun
from tests.kinds.helpers import checked_kb, shipped

FLOP = "flops/decode-weight-read"
GPU = "hardware/nvidia-h100-sxm"


def test_no_view_before_the_schema_stage() -> None:
    kb = KnowledgeBase(root="records")
    kb.add(Record(FLOP, "flop_class", f"records/{FLOP}.yaml", shipped(FLOP)))
    with pytest.raises(StageNotRun, match="schema stage"):
        views(kb)


def test_a_valid_record_has_one_view_built_once() -> None:
    kb = checked_kb({FLOP: shipped(FLOP), GPU: shipped(GPU)})
    flop, gpu = kb.get(FLOP), kb.get(GPU)
    assert flop is not None and gpu is not None
    first = views(kb).equations(flop)
    assert first is not None
    assert views(kb).equations(flop) is first  # kept in the run, not rebuilt
    assert views(kb) is kb.run.kept(VIEWS)
    assert views(kb).accelerator(gpu) is not None


def test_a_schema_invalid_record_has_no_view_and_its_finding_stays() -> None:
    broken = shipped(FLOP)
    broken["claims"][0]["kind"] = "guess"
    kb = checked_kb({FLOP: broken})
    record = kb.get(FLOP)
    assert record is not None
    assert [f.code for f in kb.run.schema or []] == ["SC001"]
    assert not views(kb).passed(record)
    assert views(kb).equations(record) is None


def test_a_new_schema_stage_gives_new_views() -> None:
    kb = checked_kb({FLOP: shipped(FLOP)})
    before = views(kb)
    schema_stage(kb)
    assert views(kb) is not before


def test_asking_for_the_wrong_kind_is_a_programming_error() -> None:
    kb = checked_kb({FLOP: shipped(FLOP), GPU: shipped(GPU)})
    flop, gpu = kb.get(FLOP), kb.get(GPU)
    assert flop is not None and gpu is not None
    with pytest.raises(ValueError, match="not an accelerator"):
        views(kb).accelerator(flop)
    with pytest.raises(ValueError, match="no equation sections"):
        views(kb).equations(gpu)
