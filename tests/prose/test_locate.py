"""kb.positions.locate_in_string: a character inside a YAML string, found at its line:col.

Prose findings point at the number itself, not at its field's key; the property
holds for every scalar style PyYAML writes (plain, quoted, literal, folded).
"""

from __future__ import annotations

import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kb.positions import locate, locate_in_string

ALPHABET = st.sampled_from(list("abcXYZ0123456789 .,:;-#'\"\\{}|>%\n") + ["µ", "≈", "“"])
STYLES = st.sampled_from([None, '"', "'", "|", ">"])


@settings(max_examples=400, deadline=None)
@given(st.text(ALPHABET, min_size=1, max_size=160), STYLES, st.data())
def test_every_non_blank_character_is_found_where_it_is_written(
    value: str, style: str | None, data: st.DataObject
) -> None:
    text = yaml.safe_dump(
        {"kind": "x", "items": [{"note": value}]}, default_style=style, width=40, allow_unicode=True
    )
    assert yaml.safe_load(text)["items"][0]["note"] == value
    offsets = [i for i, c in enumerate(value) if not c.isspace()]
    assume(offsets)
    offset = data.draw(st.sampled_from(offsets))
    line, col = locate_in_string(text, "/items/0/note", offset)
    written = text.splitlines()[line - 1][col - 1 :]
    assert written.startswith(value[offset]) or written.startswith("\\"), (text, offset)


def test_a_number_in_a_folded_summary_is_found_on_its_own_line() -> None:
    text = "summary: >-\n  Hopper GPU with 80 GB\n  at 3.35 TB/s.\nother: 1\n"
    value = yaml.safe_load(text)["summary"]
    assert locate_in_string(text, "/summary", value.index("3.35")) == (3, 6)


def test_an_unknown_pointer_or_offset_falls_back_to_the_key() -> None:
    text = "summary: plain text\n"
    assert locate_in_string(text, "/missing", 0) == locate(text, "/missing")
    assert locate_in_string(text, "/summary", 999) == locate(text, "/summary")
    assert locate_in_string("summary: [unclosed\n", "/summary", 1) == (1, 1)


def test_an_escaped_line_break_in_a_double_quoted_scalar_produces_nothing() -> None:
    value = '0000000000000000000000"\n\\\\01'  # found by Hypothesis: an off-by-one
    text = yaml.safe_dump(
        {"kind": "x", "items": [{"note": value}]}, default_style='"', width=40, allow_unicode=True
    )
    assert "\\\n" in text  # the dumper broke the line with an escaped line break
    line, col = locate_in_string(text, "/items/0/note", value.index("1"))
    assert text.splitlines()[line - 1][col - 1 :].startswith("1")
