"""`kb lsp` driven by an LSP client over stdio: diagnostics, completion, hover.

The server runs as its own process (`python -m kb lsp`) on a small records tree; the
test speaks JSON-RPC with Content-Length framing, as an editor does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import source_yaml, write_tree
from tests.diff.test_knowledge_diff import USER, _figure


class Client:
    """A minimal LSP client: requests, notifications, and reading until a message arrives."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kb", "lsp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.next_id = 0

    def send(self, method: str, params: Any, request: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return self.next_id

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = self.process.stdout.readline()
            assert line, self.process.stderr.read().decode() if self.process.stderr else "closed"
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message: dict[str, Any] = json.loads(self.process.stdout.read(length))
        return message

    def request(self, method: str, params: Any) -> Any:
        sent = self.send(method, params, request=True)
        while True:
            message = self.read()
            if message.get("id") == sent and "method" not in message:
                assert "error" not in message, message
                return message.get("result")

    def diagnostics_for(self, uri: str) -> list[dict[str, Any]]:
        while True:
            message = self.read()
            if message.get("method") == "textDocument/publishDiagnostics":
                if message["params"]["uri"] == uri:
                    return list(message["params"]["diagnostics"])

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.send("exit", None)
            self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    root = tmp_path / "records"
    write_tree(
        root,
        {
            "sources/doc.yaml": source_yaml(),
            "flops/source-figure.yaml": _figure(4, 1),
            "flops/user.yaml": USER,
        },
    )
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    lsp = Client(tmp_path)
    lsp.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    lsp.send("initialized", {})
    yield lsp, root
    lsp.close()


def _open(lsp: Client, path: Path, text: str) -> str:
    uri = path.as_uri()
    item = {"uri": uri, "languageId": "yaml", "version": 1, "text": text}
    lsp.send("textDocument/didOpen", {"textDocument": item})
    return uri


def _change(lsp: Client, uri: str, text: str, version: int) -> None:
    document = {"uri": uri, "version": version}
    lsp.send(
        "textDocument/didChange", {"textDocument": document, "contentChanges": [{"text": text}]}
    )


def test_diagnostics_appear_and_clear(client: Any) -> None:
    lsp, root = client
    broken = USER.replace('expr: "x = k*I"', 'expr: "x = k*I +"')
    uri = _open(lsp, root / "flops" / "user.yaml", broken)
    diagnostics = lsp.diagnostics_for(uri)
    assert [d["code"] for d in diagnostics] == ["EQ001"]
    text = '  twice: {expr: "x = k*I +"}'
    line = broken.splitlines().index(text)  # kb's line:col, 0-based: the `expr` of the equation
    assert diagnostics[0]["range"]["start"] == {"line": line, "character": text.index("expr")}
    assert diagnostics[0]["range"]["end"] == {"line": line, "character": len(text)}
    assert diagnostics[0]["severity"] == 1
    assert "operand is missing" in diagnostics[0]["message"]
    _change(lsp, uri, USER, 2)
    assert lsp.diagnostics_for(uri) == []


def test_a_changed_figure_republishes_the_record_that_binds_it(client: Any) -> None:
    lsp, root = client
    user = _open(lsp, root / "flops" / "user.yaml", USER)
    assert lsp.diagnostics_for(user) == []
    figure = _open(lsp, root / "flops" / "source-figure.yaml", _figure(4, 1))
    _change(lsp, figure, _figure(8, 2), 2)
    while True:  # the first publication for user may be the one of the open above
        codes = sorted(d["code"] for d in lsp.diagnostics_for(user))
        if codes:
            break
    assert codes == ["EQ007", "EQ017"]


def test_completion_offers_ids_and_fields(client: Any) -> None:
    lsp, root = client
    text = USER.replace(
        "      I: flops/source-figure#arithmetic_intensity.value\n", "      I: flops/sou\n", 1
    )
    uri = _open(lsp, root / "flops" / "user.yaml", text)
    lines = text.splitlines()
    row = lines.index("      I: flops/sou")
    position = {"line": row, "character": len(lines[row])}
    result = lsp.request(
        "textDocument/completion", {"textDocument": {"uri": uri}, "position": position}
    )
    assert "flops/source-figure" in [item["label"] for item in result["items"]]
    with_field = text.replace("      I: flops/sou\n", "      I: flops/source-figure#arith\n")
    _change(lsp, uri, with_field, 2)
    position["character"] = len("      I: flops/source-figure#arith")
    result = lsp.request(
        "textDocument/completion", {"textDocument": {"uri": uri}, "position": position}
    )
    labels = [item["label"] for item in result["items"]]
    assert "flops/source-figure#arithmetic_intensity.value" in labels


def test_hover_shows_the_bound_figure(client: Any) -> None:
    lsp, root = client
    uri = _open(lsp, root / "flops" / "user.yaml", USER)
    lines = USER.splitlines()
    row = lines.index("      I: flops/source-figure#arithmetic_intensity.value")
    position = {"line": row, "character": 15}
    result = lsp.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})
    contents = json.dumps(result["contents"])
    assert "4 FLOP/B" in contents and "basis: derived" in contents and "sources/doc" in contents


def test_definition_opens_the_bound_field(client: Any) -> None:
    lsp, root = client
    uri = _open(lsp, root / "flops" / "user.yaml", USER)
    lines = USER.splitlines()
    row = lines.index("      I: flops/source-figure#arithmetic_intensity.value")
    position = {"line": row, "character": 15}
    result = lsp.request(
        "textDocument/definition", {"textDocument": {"uri": uri}, "position": position}
    )
    target = root / "flops" / "source-figure.yaml"
    assert result["uri"] == target.as_uri()
    figure_line = (
        _figure(4, 1)
        .splitlines()
        .index("  value: {value: 4, unit: FLOP/B, basis: derived, source: sources/doc}")
    )
    assert result["range"]["start"]["line"] == figure_line
