"""Positions in UTF-16 code units, as the server announces: astral characters count twice."""

from __future__ import annotations

from pathlib import Path

from kb.lsp.text import apply_change, from_utf16, to_utf16
from tests.diff.test_knowledge_diff import USER
from tests.lsp.client import Client

ASTRAL = "\U0001d400\U0001d401\U0001d402"  # three characters outside the BMP


def test_a_diagnostic_after_three_astral_characters_counts_utf16_units(tree: Path) -> None:
    lsp = Client(tree.parent)
    result = lsp.initialize()
    assert result["capabilities"]["positionEncoding"] == "utf-16"
    line = f"text: {ASTRAL} moves 42 GB per step."
    uri = lsp.open(
        (tree / "flops" / "user.yaml").as_uri(), USER.replace("text: A phenomenon.", line)
    )
    (diagnostic,) = lsp.diagnostics_for(uri)
    assert diagnostic["code"] == "PR003"
    assert diagnostic["range"]["start"]["character"] == line.index("42") + 3  # 19, not 16
    assert diagnostic["range"]["end"]["character"] == len(line) + 3
    assert lsp.close() == 0


def test_hover_and_its_range_count_utf16_units(server: Client, tree: Path) -> None:
    line = f"text: {ASTRAL} see flops/source-figure here"
    uri = server.open(
        (tree / "flops" / "user.yaml").as_uri(), USER.replace("text: A phenomenon.", line)
    )
    row = USER.splitlines().index("text: A phenomenon.")
    start = line.index("flops/") + 3  # in UTF-16 units
    position = {"line": row, "character": start + 2}
    hover = server.request(
        "textDocument/hover", {"textDocument": {"uri": uri}, "position": position}
    )
    assert hover["contents"]["value"].startswith("flops/source-figure: A figure")
    assert hover["range"]["start"] == {"line": row, "character": start}
    assert hover["range"]["end"] == {"line": row, "character": start + len("flops/source-figure")}


def test_conversions_round_trip() -> None:
    line = f"a{ASTRAL}b\u00e9c"
    for col in range(len(line) + 1):
        assert from_utf16(line, to_utf16(line, col)) == col
    assert to_utf16(line, 4) == 7 and to_utf16(line, 6) == 9
    changed = apply_change(
        line,
        {
            "range": {"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 8}},
            "text": "B",
        },
    )
    assert changed == f"a{ASTRAL}B\u00e9c"


def test_an_incremental_change_after_astral_characters(server: Client, tree: Path) -> None:
    line = f"text: {ASTRAL} moves GB per step."
    text = USER.replace("text: A phenomenon.", line)
    uri = server.open((tree / "flops" / "user.yaml").as_uri(), text)
    assert server.diagnostics_for(uri) == []
    row = text.splitlines().index(line)
    at = {"line": row, "character": line.index("GB") + 3}  # UTF-16: after the astral three
    change = {"range": {"start": at, "end": at}, "text": "42 "}
    server.send(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]},
    )
    (diagnostic,) = server.diagnostics_for(uri)
    assert diagnostic["code"] == "PR003" and "number 42" in diagnostic["message"]
    assert diagnostic["range"]["start"]["character"] == line.index("GB") + 3
