"""A protocol fuzzer with a fixed seed: whatever arrives, the server answers and survives.

Hypothesis (derandomized: the same cases every run) draws sequences of messages, each
well-formed JSON-RPC with hostile params (wrong types, out-of-range positions, odd
URIs, surrogates, huge numbers), or a broken frame (a wrong, missing or oversized
Content-Length, junk). After each sequence a well-formed request must be answered
correctly; no answer may be an internal error (-32603) and the server's log may hold
no traceback. One server runs through all the cases. `KB_FUZZ_EXAMPLES` sets the
number of sequences (default 25, a few seconds).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.diff.test_knowledge_diff import USER
from tests.lsp.client import Client

EXAMPLES = int(os.environ.get("KB_FUZZ_EXAMPLES", "25"))

METHODS = [
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "textDocument/completion",
    "textDocument/hover",
    "textDocument/definition",
    "textDocument/codeAction",
    "workspace/didChangeWatchedFiles",
    "$/cancelRequest",
    "no/such/method",
    "initialize",
]
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, -1, 2**31, 2**64, 10**30, 1.5, -0.0]),
    st.sampled_from(["", "\ud800", "\x00", "x" * 300, "flops/", "flops/user#", "#", "/"]),
    st.lists(st.integers(-2, 3), max_size=3),
    st.text(max_size=20),
)


def _uris(root: Path) -> st.SearchStrategy[str]:
    record = (root / "flops" / "user.yaml").as_uri()
    return st.sampled_from(
        [
            record,
            record.replace("/flops/", "/flops/../flops/"),
            (root / "flops" / "new.yaml").as_uri(),
            "untitled:Untitled-1",
            "file:///dev/zero",
            f"{root.as_uri()}/flops/a%00.yaml",
            f"{root.as_uri()}/%ED%A0%80.yaml",
            "file://host/x.yaml",
            "http://example.invalid/a.yaml",
            "",
        ]
    )


def _position() -> st.SearchStrategy[Any]:
    number = st.one_of(st.integers(-3, 40), st.sampled_from([2**31, 10**20]), ODD)
    return st.one_of(st.fixed_dictionaries({"line": number, "character": number}), ODD)


def _texts() -> st.SearchStrategy[str]:
    lines = USER.splitlines(keepends=True)
    return st.one_of(
        st.just(USER),
        st.builds(lambda cut: "".join(lines[:cut]), st.integers(0, len(lines))),
        st.builds(lambda s: USER.replace("A phenomenon.", s), st.text(max_size=30)),
        st.text(max_size=60),
    )


def _params(root: Path) -> st.SearchStrategy[Any]:
    uri = st.one_of(_uris(root), ODD)
    document = st.fixed_dictionaries(
        {"uri": uri}, optional={"text": st.one_of(_texts(), ODD), "version": ODD}
    )
    change = st.one_of(
        st.fixed_dictionaries({"text": st.one_of(_texts(), ODD)}),
        st.fixed_dictionaries(
            {
                "text": st.text(max_size=10),
                "range": st.one_of(
                    st.fixed_dictionaries({"start": _position(), "end": _position()}), ODD
                ),
            }
        ),
        ODD,
    )
    return st.one_of(
        ODD,
        st.fixed_dictionaries(
            {"textDocument": st.one_of(document, ODD)},
            optional={
                "position": _position(),
                "contentChanges": st.one_of(st.lists(change, max_size=3), ODD),
                "context": st.one_of(
                    st.fixed_dictionaries({"diagnostics": st.lists(ODD, max_size=2)}), ODD
                ),
                "range": ODD,
            },
        ),
    )


def _frame(body: bytes, how: str) -> bytes:
    lengths = {
        "right": b"%d" % len(body),
        "long": b"%d" % (len(body) + 9),
        "short": b"%d" % max(len(body) - 9, 1),
        "huge": b"99999999999999999999",
        "junk": b"twelve",
    }
    if how == "none":
        return b"X-Junk: 1\r\n\r\n" + body
    return b"Content-Length: " + lengths[how] + b"\r\n\r\n" + body


def _messages(root: Path) -> st.SearchStrategy[list[bytes]]:
    message = st.builds(
        lambda method, params, request, rid: json.dumps(
            {"jsonrpc": "2.0", "method": method, "params": params}
            | ({"id": rid} if request else {})
        ).encode(),
        st.sampled_from(METHODS),
        _params(root),
        st.booleans(),
        st.one_of(st.integers(1000, 10**6), st.text(max_size=5), ODD),
    )
    how = st.sampled_from(["right"] * 8 + ["long", "short", "huge", "junk", "none"])
    return st.lists(st.builds(_frame, message, how), min_size=1, max_size=8)


ROOT = Path("/tmp")  # replaced by the fixture; strategies are built inside the test


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Client, Path]]:
    base = tmp_path_factory.mktemp("fuzz")
    root = base / "records"
    (root / "flops").mkdir(parents=True)
    (root / "flops" / "user.yaml").write_text(USER)
    env = {**os.environ, "KB_CACHE_DIR": str(base / "cache"), "KB_LSP_DEBOUNCE_MS": "1"}
    lsp = Client(base, env)
    lsp.initialize(base.as_uri())
    yield lsp, root
    lsp.close()


def test_no_sequence_of_messages_stops_or_breaks_the_server(fuzzed: tuple[Client, Path]) -> None:
    lsp, root = fuzzed
    probe = {
        "textDocument": {"uri": "file:///nowhere/records/a/b.yaml"},
        "position": {"line": 0, "character": 0},
    }

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],  # no shrinking: a hang would cost minutes
    )
    @given(_messages(root))
    def case(frames: list[bytes]) -> None:
        for data in frames:
            lsp.raw(data)
        lsp.raw(b"\r\n\r\n")  # ends a frame left open by junk, as a next header would
        sent = lsp.send("textDocument/hover", probe, request=True)
        while True:
            message = lsp.read(30)
            error = message.get("error")
            assert not error or error.get("code") != -32603, (message, lsp.log())
            if message.get("id") == sent and "method" not in message:
                assert message == {"jsonrpc": "2.0", "id": sent, "result": None}, message
                break
        assert "Traceback" not in lsp.log(), lsp.log()

    case()
    assert lsp.process.poll() is None
