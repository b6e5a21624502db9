"""YAML problems in kb's words, on one line, at the place they are (issue 37: D03, D18, T3-11).

Before: `!!int 0x` said "invalid literal for int() with base 16: ''" (Python's words), a
NUL byte gave a two-line message at 1:1, and a merge key `<<` gave LD006 and an LD013
saying the key "is read as null".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.api import validate
from tests.conftest import source_yaml, write_tree

# Python's and PyYAML's own words, which must never reach an author.
FOREIGN = (
    "invalid literal",
    "could not convert",
    "string index out of range",
    "base 16",
    "<unicode string>",
    "unacceptable character",
    "position ",
    "for merging",
    "is read as null",
    "while constructing",
)


def _findings(tmp_path: Path, text: bytes) -> list[tuple[str, int, int, str]]:
    root = tmp_path / "records"
    write_tree(root, {"sources/doc.yaml": source_yaml()})
    (root / "sources" / "doc.yaml").write_bytes(text)
    result = validate(root, remember=False)
    return [
        (f.code, f.location.line, f.location.col, f.message)
        for f in result.findings
        if f.code.startswith("LD")
    ]


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("x: !!int 0x", "!!int '0x' is not a whole number"),
        ("x: !!int", "!!int '' is not a whole number"),
        ("x: !!int 12abc", "!!int '12abc' is not a whole number"),
        ("x: !!float abc", "!!float 'abc' is not a number"),
        ("x: !!float 1.2.3", "!!float '1.2.3' is not a number"),
        ("x: !!bool maybe", "!!bool 'maybe' is not true or false"),
        ("x: !!bool ''", "!!bool '' is not true or false"),
    ],
)
def test_a_value_its_tag_cannot_read_is_said_in_kb_s_words(
    tmp_path: Path, line: str, words: str
) -> None:
    text = source_yaml() + line + "\n"
    found = _findings(tmp_path, text.encode())
    assert [(code, row) for code, row, _, _ in found] == [("LD004", text.count("\n"))]
    message = found[0][3]
    assert words in message, message
    assert not any(foreign in message for foreign in FOREIGN), message


def test_a_nul_byte_is_one_line_at_its_place(tmp_path: Path) -> None:
    text = b"kind: source\nid: sources/d\x00oc\n"
    found = _findings(tmp_path, text)
    assert found == [
        ("LD004", 2, 14, "not valid YAML: a NUL byte is not allowed in a YAML file; remove it")
    ]


def test_a_control_character_is_named(tmp_path: Path) -> None:
    found = _findings(tmp_path, b"kind: source\ntitle: a\x07b\n")
    assert [(c, line, col) for c, line, col, _ in found] == [("LD004", 2, 9)]
    assert "U+0007" in found[0][3] and "\n" not in found[0][3]


@pytest.mark.parametrize(
    "merge",
    ["<<: 5", "<<:", "x: {<<: {b: 1}, c: 2}", "a: &x {b: 1}\nc:\n  <<: *x", "x: {<<: [1]}"],
)
def test_a_merge_key_is_one_finding_in_kb_s_words(tmp_path: Path, merge: str) -> None:
    found = _findings(tmp_path, (source_yaml() + merge + "\n").encode())
    merges = [f for f in found if "merge key '<<'" in f[3]]
    assert len(merges) == 1 and merges[0][0] == "LD006", found
    assert not any(any(w in f[3] for w in FOREIGN) for f in found), found
    assert not any(f[0] == "LD013" for f in found), found
