"""Each fault the campaign of issue 40 found in `kb lsp`, driven over stdio: none is fatal.

A broken record opened through `..` or a symlinked folder is reported as through its
canonical path; no request reads a device or a FIFO; an oversized or a wrong
Content-Length is answered (-32700) and the next message still is; a lone surrogate,
an `untitled:` URI and a `%00` in a URI leave no stale diagnostics and no error.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.diff.test_knowledge_diff import USER
from tests.lsp.client import Client

BROKEN = USER.replace('expr: "x = k*I"', 'expr: "x = k*I +"').replace(
    "version: 1\n", "version: one\n"
)


def _rows(diagnostics: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    return sorted(
        (d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"])
        for d in diagnostics
    )


def _canonical_rows(server: Client, tree: Path) -> list[tuple[str, int, int]]:
    uri = server.open((tree / "flops" / "user.yaml").as_uri(), BROKEN)
    rows = _rows(server.diagnostics_for(uri))
    server.send("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert server.diagnostics_for(uri) == []  # closing clears
    return rows


def test_a_path_with_dotdot_is_reported_as_its_canonical_path(server: Client, tree: Path) -> None:
    canonical = _canonical_rows(server, tree)
    assert len(canonical) >= 2
    uri = server.open(f"{tree.as_uri()}/flops/../sources/../flops/user.yaml", BROKEN)
    assert _rows(server.diagnostics_for(uri)) == canonical


def test_a_symlinked_folder_is_reported_as_its_canonical_path(server: Client, tree: Path) -> None:
    canonical = _canonical_rows(server, tree)
    link = tree.parent / "view"
    link.symlink_to(tree / "flops", target_is_directory=True)
    uri = server.open((link / "user.yaml").as_uri(), BROKEN)
    assert _rows(server.diagnostics_for(uri)) == canonical


def _position(uri: str, line: int = 0, character: int = 0) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def test_no_request_reads_a_device_or_a_fifo(server: Client, tree: Path) -> None:
    fifo = tree / "flops" / "pipe.yaml"
    os.mkfifo(fifo)
    for uri in ("file:///dev/zero", fifo.as_uri(), "file:///dev/zero.yaml"):
        for method in ("textDocument/hover", "textDocument/definition", "textDocument/completion"):
            started = time.monotonic()
            result = server.request(method, _position(uri))
            assert result in (None, {"isIncomplete": False, "items": []})
            assert time.monotonic() - started < 10
    # a reference to the FIFO from an open record: hover and definition do not block on it
    text = USER.replace("text: A phenomenon.", "text: see flops/pipe")
    uri = server.open((tree / "flops" / "user.yaml").as_uri(), text)
    row = text.splitlines().index("text: see flops/pipe")
    assert server.request("textDocument/hover", _position(uri, row, 12)) is None
    assert server.request("textDocument/definition", _position(uri, row, 12)) is None
    codes = [d["code"] for d in server.diagnostics_for(uri)]  # the tree, FIFO included, checks
    assert isinstance(codes, list)


def _answers_after(server: Client) -> None:
    """The server still answers a well-formed request."""
    result = server.request("textDocument/hover", _position("file:///nowhere/records/a/b.yaml"))
    assert result is None


def test_an_oversized_content_length_is_answered_and_survived(server: Client) -> None:
    server.raw(b"Content-Length: 99999999999999999999\r\n\r\n{}")
    error = server.read()
    assert error["error"]["code"] == -32700 and "limit" in error["error"]["message"]
    assert "OverflowError" not in json.dumps(error)
    _answers_after(server)


@pytest.mark.parametrize("delta", [7, -7])
def test_a_wrong_content_length_is_answered_and_survived(server: Client, delta: int) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "shutdown-not", "params": None})
    server.raw(b"Content-Length: %d\r\n\r\n" % (len(body) + delta) + body.encode())
    server.raw(b"Content-Length: 2\r\n\r\n{}")  # what follows the wrong frame
    error = server.read()
    assert error["error"]["code"] == -32700
    _answers_after(server)


def test_junk_and_a_header_without_length_are_answered(server: Client) -> None:
    server.raw(b"hello\r\nContent-Type: x\r\n\r\n")
    assert server.read()["error"]["code"] == -32700
    server.raw(b"Content-Length: 5\r\n\r\n[1,2]")
    assert server.read()["error"]["code"] == -32600
    _answers_after(server)


def test_a_lone_surrogate_is_a_finding_not_an_exception(server: Client, tree: Path) -> None:
    uri = server.open((tree / "flops" / "user.yaml").as_uri(), USER)
    assert server.diagnostics_for(uri) == []
    server.change(uri, USER.replace("A phenomenon.", "A \ud800 phenomenon."), 2)
    codes = [d["code"] for d in server.diagnostics_for(uri)]
    assert codes == ["LD002"]  # the bytes are not UTF-8: what kb validate says of such a file
    server.change(uri, USER, 3)
    assert server.diagnostics_for(uri) == []  # nothing stale
    hover = server.request("textDocument/hover", _position("file:///x/records/\ud800/a.yaml"))
    assert hover is None
    assert "Traceback" not in server.log()


@pytest.mark.parametrize(
    "uri",
    ["untitled:Untitled-1", "file:///tmp/records/flops/a%00.yaml", "file:///tmp/records/%FF.yaml"],
)
def test_a_uri_that_is_no_record_is_left_alone(server: Client, tree: Path, uri: str) -> None:
    server.open(uri, BROKEN)
    server.change(uri, BROKEN + "\n", 2)
    assert server.request("textDocument/completion", _position(uri, 0, 3)) == {
        "isIncomplete": False,
        "items": [],
    }
    assert server.request("textDocument/hover", _position(uri)) is None
    server.send("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert server.diagnostics_for(uri) == []  # the close clears, nothing else was published
    # and a record still checks
    record = server.open((tree / "flops" / "user.yaml").as_uri(), BROKEN)
    assert server.diagnostics_for(record)
    assert "Traceback" not in server.log()


def test_bad_params_are_answered_invalid_params(server: Client) -> None:
    for params in (None, {"textDocument": 3}, {"textDocument": {"uri": "file:///a.yaml"}}):
        message = server.response(server.send("textDocument/hover", params, request=True))
        assert message["error"]["code"] == -32602
    server.send("textDocument/didChange", {"textDocument": {"uri": 5}})  # a notification: logged
    _answers_after(server)
    assert "Traceback" not in server.log()


def test_exit_after_shutdown_is_code_zero(tree: Path) -> None:
    lsp = Client(tree.parent)
    lsp.initialize()
    assert lsp.close() == 0


def test_before_initialize_requests_are_refused_and_notifications_dropped(tree: Path) -> None:
    lsp = Client(tree.parent)
    uri = lsp.open((tree / "flops" / "user.yaml").as_uri(), BROKEN)  # dropped: not initialized
    sent = lsp.send("textDocument/hover", _position(uri), request=True)
    assert lsp.response(sent)["error"]["code"] == -32002
    lsp.initialize()
    assert lsp.request("textDocument/hover", _position(uri)) is None  # it was never opened
    assert lsp.close() == 0
