"""A bare number bound to a symbol (`N: 8`) gets a count's example, not a bandwidth's (issue 40)."""

from __future__ import annotations

from kb.equations.bind import BindError, resolve
from kb.model import KnowledgeBase


def test_a_bare_count_is_told_to_write_a_count() -> None:
    found = resolve(KnowledgeBase("/x"), 8)
    assert isinstance(found, BindError)
    assert 'unit: "1"' in found.hint and "count" in found.hint
    assert "GB/s}" not in found.hint.split(" or ")[0]


def test_other_bare_text_keeps_the_quantity_or_field_example() -> None:
    found = resolve(KnowledgeBase("/x"), "nvidia-h100")
    assert isinstance(found, BindError)
    assert "hardware/<id>#memory.bandwidth" in found.hint
