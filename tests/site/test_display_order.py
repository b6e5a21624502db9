"""`display:` takes a sub- and a superscript in either order (docs/record-format.md)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kb.sitegen.mathml import display_name


@pytest.mark.parametrize("shown", ["B^*_N", "B_N^*"])
def test_sub_and_superscript_in_either_order(shown: str) -> None:
    assert ET.tostring(display_name(shown)).decode() == (
        "<msubsup><mi>B</mi><mi>N</mi><mo>*</mo></msubsup>"
    )


def test_two_subscripts_are_shown_as_written() -> None:
    assert ET.tostring(display_name("B_a^*_b")).decode() == "<mi>B_a^*_b</mi>"
