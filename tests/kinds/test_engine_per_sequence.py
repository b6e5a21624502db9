"""The engine kind's `per_sequence_overhead`: the view reads it; without its accelerators, none.

A per-sequence overhead is declared for named accelerators only (a row of the engine on
another accelerator must not get it), so the schema requires `hardware` beside the
figure and the calibration receipts.
"""

from __future__ import annotations

import copy

from kb.kinds import views
from tests.kinds.helpers import checked_kb, shipped


def test_the_vllm_view_reads_its_per_sequence_overhead() -> None:
    raw = shipped("engines/vllm")
    kb = checked_kb({"engines/vllm": raw})
    assert kb.run.schema == []
    view = views(kb).engine(kb.get("engines/vllm"))  # type: ignore[arg-type]
    assert view is not None and view.per_sequence_overhead is not None
    term = view.per_sequence_overhead
    assert term.figure == raw["per_sequence_overhead"]["figure"]
    assert term.hardware == ("hardware/amd-instinct-mi300x",)
    assert list(term.calibration) == raw["per_sequence_overhead"]["calibration"]
    assert term.mechanism is not None and term.mechanism.startswith("Not known")


def test_an_engine_without_one_has_none() -> None:
    kb = checked_kb({"engines/nemo": shipped("engines/nemo")})
    view = views(kb).engine(kb.get("engines/nemo"))  # type: ignore[arg-type]
    assert view is not None and view.per_sequence_overhead is None


def test_a_per_sequence_overhead_without_its_accelerators_fails_the_schema() -> None:
    data = copy.deepcopy(shipped("engines/vllm"))
    del data["per_sequence_overhead"]["hardware"]
    kb = checked_kb({"engines/vllm": data})
    assert [f.code for f in kb.run.schema or []] == ["SC001"]
    record = kb.get("engines/vllm")
    assert record is not None and views(kb).engine(record) is None
