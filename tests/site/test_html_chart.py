"""kb.sitegen.html_chart writes exactly what the `_chart.html` partial it replaced wrote.

The partial as it was (fixtures/chart_before.html) is rendered by Jinja beside
the Python function: on every chart of the shipped records' pages (flop classes
and placements, erratum marks included), and on those charts with every text
replaced by generated markup, quotes and ampersands: Hypothesis's, with the suite's
fixed seed (tests/conftest.py's `kb` profile), 20 per push (a third of the 60 it had,
the same strategy); `KB_FUZZ_EXAMPLES=N` runs N.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.sitegen import html_chart
from kb.sitegen.render import make_environment

from .conftest import FIXTURES


def _partial_env() -> jinja2.Environment:
    env = make_environment(Path(__file__).resolve().parents[2] / "kb" / "theme")
    env.loader = jinja2.FileSystemLoader(str(FIXTURES))
    return env


PARTIAL = _partial_env().from_string('{% include "chart_before.html" %}')


def _check(chart: Any) -> None:
    assert html_chart.figure(chart) == PARTIAL.render(chart=chart)


@pytest.fixture(scope="module")
def charts(shipped_charts: list[tuple[Any, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Every chart of the shipped pages (conftest.py's `shipped_charts`, made once a process)."""
    return [chart for _, drawn in shipped_charts for chart in drawn]


def test_every_chart_of_the_shipped_pages_matches_the_partial(charts: list[Any]) -> None:
    for chart in charts:
        _check(chart)
    assert len(charts) >= 10
    marks = [mark for chart in charts for mark in chart["marks"]]
    assert any(mark.get("erratum") for mark in marks)  # each branch of a mark is exercised
    assert any(mark.get("rotate") for mark in marks)
    assert any(chart["tables"] for chart in charts)
    assert any(chart.get("legend_marks") for chart in charts)


HOSTILE = st.text(alphabet=st.sampled_from(list("ab<>&\"' /é—")), max_size=8)


def _hostile(value: Any, texts: Any) -> Any:
    """`value` with each string leaf replaced by the next generated text (numbers kept)."""
    if isinstance(value, str):
        return texts.draw(HOSTILE)
    if isinstance(value, dict):
        return {key: _hostile(item, texts) for key, item in value.items()}
    if isinstance(value, list):
        return [_hostile(item, texts) for item in value]
    return value


@settings(max_examples=int(os.environ.get("KB_FUZZ_EXAMPLES", "0")) or 20, deadline=None)
@given(st.data(), st.integers(min_value=0, max_value=10_000))
def test_charts_with_hostile_texts_match_the_partial(
    charts: list[Any], data: st.DataObject, pick: int
) -> None:
    chart = _hostile(charts[pick % len(charts)], data)
    _check(chart)
    text = html_chart.figure(chart)
    assert "<b" not in text.replace("<br", "")  # no generated tag got through
