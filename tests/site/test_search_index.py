"""The search index's figure forms: kept once per distinct figure, never mixed up by the cache."""

from __future__ import annotations

from kb.sitegen.search import _figure, figure_texts, figures_and_quantities


def _forms(value: object) -> list[str]:
    return figure_texts({"x": {"value": value, "unit": "GB/s"}})


def test_figures_that_compare_equal_keep_their_own_text() -> None:
    _figure.cache_clear()
    for first, second in ((1, 1.0), (1.0, "1.00"), (0.0, -0.0), (-0.0, 0.0)):
        warm = _forms(first)  # the first fills the cache; the second must not read its entry
        assert _forms(second)[0] != warm[0], (first, second)
    assert _forms(1)[0] == "1 GB/s" and _forms(1.0)[0] == "1.0 GB/s"
    assert _forms(-0.0)[0] == "-0.0 GB/s" and _forms(0.0)[0] == "0.0 GB/s"
    assert _forms(True) == [] and _forms(None) == []


def test_a_figure_is_shown_as_authored_and_in_its_readable_unit() -> None:
    forms = _forms(3350)
    assert forms[0] == "3350 GB/s" and len(forms) == 2 and forms[1] != forms[0]
    assert figure_texts({"x": {"value": 3, "unit": "no-such-unit"}}) == ["3 no-such-unit"]
    assert figure_texts({"history": [{"value": 1, "unit": "s"}]}) == []


def test_a_figure_past_the_float_range_keeps_its_text_and_no_number() -> None:
    """`1e400` is a number kb reads exactly, but no float (the index is JSON) holds it: the
    figure stays searchable by its text and is left out of the quantities the page compares
    numbers in, rather than stopping the build with an OverflowError."""
    for value in ("1e400", "-1e400", "1e300"):  # 1e300 GB/s is 1e309 B/s: past it too
        figures, found = figures_and_quantities({"x": {"value": value, "unit": "GB/s"}})
        assert figures[0] == f"{value} GB/s" and len(figures) == 2, figures
        assert found == [], found
    figures, found = figures_and_quantities({"x": {"value": "1e290", "unit": "GB/s"}})
    assert found == [["x", 1e299, "B/s", figures[-1]]], found  # in range: kept as before
