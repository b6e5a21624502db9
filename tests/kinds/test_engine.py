"""The engine kind: each shipped engine has a view saying what its data says; a bad one has none."""

from __future__ import annotations

import copy
from pathlib import Path

from kb.kinds import views
from tests.kinds.helpers import RECORDS, checked_kb, shipped

ENGINES = sorted(f"engines/{p.stem}" for p in Path(RECORDS, "engines").glob("*.yaml"))


def test_every_shipped_engine_has_a_view() -> None:
    assert {"engines/nemo", "engines/sglang", "engines/vllm", "engines/tensorrt-llm"} <= set(
        ENGINES
    )
    data = {record_id: shipped(record_id) for record_id in ENGINES}
    kb = checked_kb(data)
    assert kb.run.schema == []
    for record in kb:
        view = views(kb).engine(record)
        assert view is not None, record.id
        raw = data[record.id]
        assert view.name == raw["name"]
        over = raw.get("per_layer_overhead")
        assert (view.per_layer_overhead is None) == (over is None)
        if view.per_layer_overhead is not None:
            assert view.per_layer_overhead.figure == over["figure"]
            assert list(view.per_layer_overhead.calibration) == over["calibration"]
    nemo = views(kb).engine(kb.get("engines/nemo"))  # type: ignore[arg-type]
    assert nemo is not None and nemo.per_layer_overhead is not None
    assert nemo.per_layer_overhead.hardware == "hardware/nvidia-h100-sxm"


def test_an_overhead_without_its_calibration_receipts_fails_the_schema() -> None:
    data = copy.deepcopy(shipped("engines/nemo"))
    del data["per_layer_overhead"]["calibration"]
    kb = checked_kb({"engines/nemo": data})
    assert [f.code for f in kb.run.schema or []] == ["SC001"]
    record = kb.get("engines/nemo")
    assert record is not None and views(kb).engine(record) is None
