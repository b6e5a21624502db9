"""`kb list --predictions`: every prediction and bound with predicted, measured, error, state.

Built on tests/fixtures/truth (fixture figures, not measurements): its one prediction
is validated (predicted 38.35 us, measured 42 us); edits make it a contradicted one,
an accepted one, or a bound.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.commands.test_cli import invoke
from tests.commands.test_show import truth_tree

PREDICTION = "    band: {rel: 0.25}\n"
MEASURED = "latency: {value: 42, unit: us"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    return truth_tree(tmp_path)


def _edit(tree: Path, relative: str, old: str, new: str) -> None:
    path = tree / "records" / relative
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _rows(tree: Path) -> list[dict[str, str]]:
    code, output = invoke(tree, "list", "--predictions", "--format", "json")
    assert code == 0, output
    document = json.loads(output)
    assert document["count"] == len(document["predictions"])
    return list(document["predictions"])


def test_a_validated_prediction_is_listed_with_its_figures(tree: Path) -> None:
    (row,) = _rows(tree)
    assert row == {
        "id": "flops/ring",
        "prediction": "t-1mib-measured",
        "kind": "prediction",
        "predicted": "38.35 us",
        "measured": "42.00 us",
        "error": "-8.7%",
        "band": "\u00b125%",
        "state": "validated",
    }
    code, output = invoke(tree, "list", "--predictions")
    assert code == 0, output
    assert output.splitlines()[-1] == "1 predictions: 1 validated"


def test_a_contradiction_is_listed_as_such_and_an_accepted_one_with_its_reason(
    tree: Path,
) -> None:
    _edit(tree, "receipts/ar.yaml", MEASURED, "latency: {value: 60, unit: us")
    (row,) = _rows(tree)
    assert (row["state"], row["error"]) == ("contradicted", "-36.1%")
    _edit(tree, "flops/ring.yaml", PREDICTION, PREDICTION + "    accepted: {reason: no launch}\n")
    (row,) = _rows(tree)
    assert row["state"] == "contradicted (accepted: no launch)"
    code, output = invoke(tree, "list", "--predictions")
    assert output.splitlines()[-1] == "1 predictions: 1 contradicted (accepted)"


@pytest.mark.parametrize(
    ("side", "latency", "state"),
    [("lower", 60, "bound holds"), ("lower", 30, "contradicted"), ("upper", 30, "bound holds")],
)
def test_a_bound_holds_or_is_contradicted_with_its_tightness(
    tree: Path, side: str, latency: int, state: str
) -> None:
    _edit(tree, "receipts/ar.yaml", MEASURED, f"latency: {{value: {latency}, unit: us")
    _edit(tree, "flops/ring.yaml", "    kind: prediction\n", "    kind: bound\n")
    _edit(tree, "flops/ring.yaml", PREDICTION, f"    bound: {side}\n")
    (row,) = _rows(tree)
    tightness = f"{latency / 38.35008:.3g}"
    assert (row["kind"], row["state"]) == ("bound", state)
    assert row["band"] == f"{side} bound (tightness {tightness})"
    code, output = invoke(tree, "list", "--predictions")
    assert "limitation" not in output
