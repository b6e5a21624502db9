"""A small LSP client for the tests: the server as its own process, frames read with a timeout.

Every read has a deadline, so a server that hangs fails the test instead of the suite;
`raw` sends bytes as they are (broken frames included).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

TIMEOUT = float(os.environ.get("KB_LSP_TEST_TIMEOUT", "60"))


class Client:
    """Requests, notifications, raw bytes; messages from the server arrive in a queue."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kb", "lsp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.next_id = 0
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[bytes] = []
        self.readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._drain_stderr, daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            assert length is not None
            self.messages.put(json.loads(stream.read(length)))

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)

    def raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, method: str, params: Any, request: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.next_id

    def read(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        try:
            message = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message in {timeout} s; stderr: {self.log()}") from None
        assert message is not None, f"the server closed its output; stderr: {self.log()}"
        return message

    def log(self) -> str:
        return b"".join(self.stderr).decode(errors="replace")[-4000:]

    def response(self, request_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The whole response to `request_id` (result or error); other messages are skipped."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(deadline - time.monotonic(), 0.01))
            if "method" not in message and message.get("id") == request_id:
                return message

    def request(self, method: str, params: Any) -> Any:
        message = self.response(self.send(method, params, request=True))
        assert "error" not in message, message
        return message.get("result")

    def diagnostics_for(self, uri: str, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(deadline - time.monotonic(), 0.01))
            if message.get("method") == "textDocument/publishDiagnostics":
                if message["params"]["uri"] == uri:
                    return list(message["params"]["diagnostics"])

    def initialize(self, root_uri: str | None = None) -> Any:
        params = {"processId": None, "rootUri": root_uri, "capabilities": {}}
        result = self.request("initialize", params)
        self.send("initialized", {})
        return result

    def open(self, uri: str, text: str, version: int = 1) -> str:
        item = {"uri": uri, "languageId": "yaml", "version": version, "text": text}
        self.send("textDocument/didOpen", {"textDocument": item})
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        self.send(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )

    def close(self) -> int | None:
        """Shut the server down as an editor does; its exit code."""
        try:
            if self.process.poll() is None:
                self.request("shutdown", None)
                self.send("exit", None)
                self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            # The readers end at the pipes' end: joined here, so no thread outlives the test
            # (a later test's fork pool declines beside one: kb.workers.can_fork).
            for reader in self.readers:
                reader.join(10)
        return self.process.returncode
