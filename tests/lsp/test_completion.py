"""Completion as `textEdit`s on the word being typed, triggered by `/` and `#`; quick fixes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.diff.test_knowledge_diff import USER
from tests.lsp.client import Client

LINE = "      I: flops/source-figure#arithmetic_intensity.value"


def _complete(server: Client, uri: str, row: int, character: int) -> Any:
    position = {"line": row, "character": character}
    params = {"textDocument": {"uri": uri}, "position": position, "context": {"triggerKind": 2}}
    return server.request("textDocument/completion", params)


def test_trigger_characters_are_announced(tree: Path) -> None:
    lsp = Client(tree.parent)
    capabilities = lsp.initialize()["capabilities"]
    assert capabilities["completionProvider"]["triggerCharacters"] == ["/", "#"]
    assert capabilities["codeActionProvider"]["codeActionKinds"] == ["quickfix"]
    assert lsp.close() == 0


def test_ids_after_a_slash_replace_the_typed_word(server: Client, tree: Path) -> None:
    text = USER.replace(LINE + "\n", "      I: flops/\n", 1)
    uri = server.open((tree / "flops" / "user.yaml").as_uri(), text)
    row = text.splitlines().index("      I: flops/")
    result = _complete(server, uri, row, len("      I: flops/"))
    items = {item["label"]: item for item in result["items"]}
    assert set(items) == {"flops/source-figure", "flops/user"}
    edit = items["flops/source-figure"]["textEdit"]
    assert edit["newText"] == "flops/source-figure"
    assert edit["range"] == {
        "start": {"line": row, "character": len("      I: ")},
        "end": {"line": row, "character": len("      I: flops/")},
    }


def test_fields_after_a_hash(server: Client, tree: Path) -> None:
    typed = "      I: flops/source-figure#"
    text = USER.replace(LINE + "\n", typed + "\n", 1)
    uri = server.open((tree / "flops" / "user.yaml").as_uri(), text)
    row = text.splitlines().index(typed)
    labels = [item["label"] for item in _complete(server, uri, row, len(typed))["items"]]
    assert "flops/source-figure#arithmetic_intensity.value" in labels
    assert all(label.startswith("flops/source-figure#") for label in labels)


def test_a_did_you_mean_hint_is_a_quick_fix(server: Client, tree: Path) -> None:
    wrong = "source: sources/dco}"
    text = USER.replace("source: sources/doc}", wrong, 1)
    uri = server.open((tree / "flops" / "user.yaml").as_uri(), text)
    diagnostics = server.diagnostics_for(uri)
    (dangling,) = [d for d in diagnostics if d["code"] == "RF001"]
    params = {
        "textDocument": {"uri": uri},
        "range": dangling["range"],
        "context": {"diagnostics": [dangling]},
    }
    (action,) = server.request("textDocument/codeAction", params)
    (edit,) = action["edit"]["changes"][uri]
    row = dangling["range"]["start"]["line"]
    line = text.splitlines()[row]
    assert edit["newText"] == "sources/doc"
    start = line.index("sources/dco")
    assert edit["range"]["start"] == {"line": row, "character": start}
    assert edit["range"]["end"] == {"line": row, "character": start + len("sources/dco")}
    fixed = line[:start] + edit["newText"] + line[start + len("sources/dco") :]
    server.change(uri, text.replace(line, fixed), 2)
    assert [d for d in server.diagnostics_for(uri) if d["code"] == "RF001"] == []
