"""The language server's loop: JSON-RPC over stdio, every message answered, none fatal.

A reader thread turns stdin into frames (kb.lsp.framing: a bad frame becomes an
error answer, and reading goes on); the main thread handles them in order and runs
the checks. A change does not check at once: its records tree is checked when no
message has come for `debounce` seconds (`KB_LSP_DEBOUNCE_MS`; at most `MAX_DELAY`
after the first change; counted from when the reader received the message, so a
change that came in while a check ran waits only what is left of the debounce),
so forty quick changes are one check; a check that a newer change made
stale before it was published is dropped and the newer text checked instead.
Requests (completion, hover, definition, code actions) are answered between
checks from the open buffers and the ids of the tree, without a check.

Every handler's parameters are checked before use: a request with bad ones gets
-32602 with what was wrong; a notification with bad ones is logged to stderr and
otherwise ignored. Anything a handler still raises is logged and answered -32603;
the server goes on. Diagnostics use UTF-16 columns, as announced.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from kb import settings
from kb.findings import Finding
from kb.lsp import features
from kb.lsp.engine import Checked, Engine
from kb.lsp.framing import Frame, Reader, encode
from kb.lsp.text import apply_change, canonical, from_utf16, lines_of, records_root, to_utf16

MAX_DELAY = 0.5
# The files an edit affects besides the edited buffers are checked this many at a time,
# a newer change looked for in between: editing flops/tp-decode-allreduce-time affects 13
# files, ~0.5 s CPU checked at once, which a newer change waited for; in twos the longest
# wait is ~0.25 s, for ~10% more CPU in all (each check loads what it reads).
REST_CHUNK = 2
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32603,
)
NOT_INITIALIZED = -32002


class BadParams(ValueError):
    """A message's params are not what the protocol says: answered -32602."""


@dataclass
class Document:
    """An open document: the client's URI, its text, and the record path it is (if any)."""

    uri: str
    text: str
    path: Path | None
    root: Path | None


@dataclass
class Server:
    """The server's state: open documents, one engine per records tree, what was published."""

    write: Callable[[bytes], None]
    documents: dict[str, Document] = field(default_factory=dict)
    engines: dict[Path, Engine] = field(default_factory=dict)
    published: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # uri -> diagnostics
    pending: dict[Path, tuple[float, float]] = field(default_factory=dict)  # root -> first, last
    generation: dict[Path, int] = field(default_factory=dict)
    dropped: dict[Path, int] = field(default_factory=dict)  # superseded checks in a row
    initialized: bool = False
    shut_down: bool = False
    exit_code: int | None = None
    debounce: float = field(default_factory=settings.lsp_debounce)  # $KB_LSP_DEBOUNCE_MS
    received: float | None = None  # when the message being handled was read (None: now)

    # --- the wire -----------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.write(encode({"jsonrpc": "2.0", **message}))

    def answer(self, request_id: Any, result: Any) -> None:
        self.send({"id": request_id, "result": result})

    def fail(self, request_id: Any, code: int, message: str) -> None:
        self.send({"id": request_id, "error": {"code": code, "message": message}})

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    # --- dispatch -----------------------------------------------------------------------

    def handle(self, frame: Frame) -> None:
        """Answer one frame; nothing it holds can stop the server."""
        if frame.error:
            self.fail(_valid_id(frame.request_id), PARSE_ERROR, f"Parse error: {frame.error}")
            return
        message = frame.message
        if not isinstance(message, dict):
            self.fail(None, INVALID_REQUEST, "Invalid Request: a message is a JSON object")
            return
        method, request_id, is_request = message.get("method"), message.get("id"), "id" in message
        if method is None:
            return  # a response to a request of ours (we send none) or an empty object
        if not isinstance(method, str) or (is_request and _valid_id(request_id) != request_id):
            self.fail(_valid_id(request_id), INVALID_REQUEST, "Invalid Request: bad method or id")
            return
        params = message.get("params")
        try:
            self._dispatch(method, params, request_id, is_request)
        except BadParams as exc:
            if is_request:
                self.fail(request_id, INVALID_PARAMS, f"Invalid params for {method}: {exc}")
            else:
                _log(f"{method}: invalid params: {exc}")
        except Exception:  # noqa: BLE001 - the server outlives any one message
            _log(f"{method}: {traceback.format_exc()}")
            if is_request:
                self.fail(request_id, INTERNAL, f"kb lsp could not answer {method} (see its log)")

    def _dispatch(self, method: str, params: Any, request_id: Any, is_request: bool) -> None:
        if method == "exit":
            self.exit_code = 0 if self.shut_down else 1
            return
        if method != "initialize" and not self.initialized:
            if is_request:  # a notification before `initialize` is dropped, as LSP says
                self.fail(request_id, NOT_INITIALIZED, "the server is not initialized")
            return
        if is_request and self.shut_down:
            self.fail(request_id, INVALID_REQUEST, "the server is shut down")
            return
        handler = _REQUESTS.get(method) if is_request else _NOTIFICATIONS.get(method)
        if handler is None:
            if is_request:
                self.fail(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
            return
        result = handler(self, params)
        if is_request:
            self.answer(request_id, result)

    # --- lifecycle ----------------------------------------------------------------------

    def initialize(self, params: Any) -> dict[str, Any]:
        from kb import __version__

        self.initialized = True
        return {
            "capabilities": {
                "positionEncoding": "utf-16",
                "textDocumentSync": {
                    "openClose": True,
                    "change": 2,
                    "save": {"includeText": False},
                },
                "completionProvider": {"triggerCharacters": ["/", "#"]},
                "hoverProvider": True,
                "definitionProvider": True,
                "codeActionProvider": {"codeActionKinds": ["quickfix"]},
            },
            "serverInfo": {"name": "kb", "version": __version__},
        }

    def shutdown(self, params: Any) -> None:
        self.shut_down = True

    # --- documents ----------------------------------------------------------------------

    def did_open(self, params: Any) -> None:
        item = _field(params, "textDocument", dict)
        uri, text = _field(item, "uri", str), _field(item, "text", str)
        path = canonical(uri)
        root = records_root(path) if path is not None else None
        self.documents[uri] = Document(uri, text, path, root)
        self._changed(root)

    def did_change(self, params: Any) -> None:
        uri = _uri(params)
        document = self.documents.get(uri)
        if document is None:
            raise BadParams(f"{uri!r} is not open")
        changes = _field(params, "contentChanges", list)
        text = document.text
        try:
            for change in changes:
                text = apply_change(text, change)
        except ValueError as exc:
            raise BadParams(str(exc)) from exc
        document.text = text
        self._changed(document.root)

    def did_close(self, params: Any) -> None:
        uri = _uri(params)
        document = self.documents.pop(uri, None)
        self.published.pop(uri, None)
        self.notify("textDocument/publishDiagnostics", {"uri": uri, "diagnostics": []})
        if document is not None:
            self._changed(document.root)

    def did_save(self, params: Any) -> None:
        document = self.documents.get(_uri(params))
        if document is not None and document.root in self.engines:
            self.engines[document.root].stale()
            self._changed(document.root)

    def watched_files(self, params: Any) -> None:
        for engine in self.engines.values():  # any file of any tree may have changed
            engine.stale()
            self._changed(engine.root)

    def _changed(self, root: Path | None) -> None:
        if root is None:
            return
        now = time.monotonic() if self.received is None else min(self.received, time.monotonic())
        first = self.pending.get(root, (now, now))[0]
        self.pending[root] = (first, now)
        self.generation[root] = self.generation.get(root, 0) + 1

    # --- checks -------------------------------------------------------------------------

    def due(self) -> float | None:
        """Seconds until the next check is due (0: now), or None when none is pending."""
        if not self.pending:
            return None
        now = time.monotonic()
        waits = (
            min(first + MAX_DELAY, last + self.debounce) for first, last in self.pending.values()
        )
        return max(0.0, min(waits) - now)

    def next_root(self) -> Path | None:
        now = time.monotonic()
        for root, (first, last) in self.pending.items():
            if now >= min(first + MAX_DELAY, last + self.debounce):
                return root
        return None

    def check(self, root: Path, settle: Callable[[], None]) -> None:
        """Check `root` with its open buffers; publish unless a newer change superseded it.

        The edited buffers first (their diagnostics are what the author waits for),
        then the other files they affect, REST_CHUNK at a time; a change that arrives
        after any of these supersedes the rest (it is checked next, at once).
        """
        del self.pending[root]
        generation = self.generation.get(root, 0)
        engine = self.engines.setdefault(root, Engine(root, freeze=True))
        buffers = {
            doc.path: doc.text.encode("utf-8", "surrogatepass")
            for doc in self.documents.values()
            if doc.root == root and doc.path is not None
        }
        try:
            plan = engine.plan(buffers)
            edited = plan.affected & plan.dirty.keys()
            fresh = engine.run(plan, edited)
            if self._superseded(root, generation, settle):
                return
            self._publish_checked(root, Checked(fresh, plan.disk), only=edited)
            rest = sorted(plan.affected - edited)
            for start in range(0, len(rest), REST_CHUNK):
                fresh |= engine.run(plan, set(rest[start : start + REST_CHUNK]))
                if self._superseded(root, generation, settle):
                    return
        except Exception:  # noqa: BLE001 - a check that fails publishes nothing, logs why
            _log(f"check of {root}: {traceback.format_exc()}")
            return
        self._publish_checked(root, Checked(fresh, plan.disk))

    def _superseded(self, root: Path, generation: int, settle: Callable[[], None]) -> bool:
        """Answer what came meanwhile; True when a change there makes this check stale."""
        settle()
        if self.generation.get(root, 0) != generation and self.dropped.get(root, 0) < 2:
            self.dropped[root] = self.dropped.get(root, 0) + 1  # typing goes on: check again
            return True
        self.dropped[root] = 0
        return False

    def _publish_checked(self, root: Path, checked: Checked, only: set[str] | None = None) -> None:
        from kb.loader import display_path

        open_by_name: dict[str, list[Document]] = {}
        for doc in self.documents.values():
            if doc.root == root and doc.path is not None:
                open_by_name.setdefault(display_path(doc.path), []).append(doc)
        for name, docs in open_by_name.items():
            if only is None or name in only:
                for doc in docs:
                    self._publish(doc.uri, _diagnostics(checked.findings(name), doc.text))
        if only is not None:
            return
        shown: set[str] = set()
        for name in checked.affected() - open_by_name.keys():  # files a buffer changes
            findings = checked.findings(name)
            if _rows(findings) != _rows(checked.disk.findings_of([name])):
                path = Path(os.path.abspath(name))
                text, _ = features.read_record(path)
                uri = path.as_uri()
                self._publish(uri, _diagnostics(findings, text or ""))
                shown.add(uri)
        for uri in list(self.published):  # what an earlier buffer changed, and no longer does
            if uri not in shown and uri not in self.documents and _under(uri, root):
                self._publish(uri, [])

    def _publish(self, uri: str, diagnostics: list[dict[str, Any]]) -> None:
        if not diagnostics and uri not in self.published and uri not in self.documents:
            return
        if self.published.get(uri) == diagnostics and uri in self.published:
            return
        if diagnostics or uri in self.documents:
            self.published[uri] = diagnostics
        else:
            self.published.pop(uri, None)
        self.notify("textDocument/publishDiagnostics", {"uri": uri, "diagnostics": diagnostics})

    # --- requests on a document ---------------------------------------------------------

    def _at(self, params: Any) -> tuple[Document, str, int] | None:
        """The open document, the line and the code-point column a request points at."""
        document = self.documents.get(_uri(params))
        position = _field(params, "position", dict)
        row, units = _field(position, "line", int), _field(position, "character", int)
        if row < 0 or units < 0:
            raise BadParams("a position is two whole numbers >= 0")
        if document is None or document.root is None:
            return None
        rows = lines_of(document.text)
        if row >= len(rows):
            return None
        return document, rows[row], from_utf16(rows[row], units)

    def _loader(self, root: Path) -> features.Loader:
        def load(record_id: str) -> Mapping[str, Any] | None:
            path = features.record_path(root, record_id)
            if path is None:
                return None
            for doc in self.documents.values():
                if doc.path == path:
                    return features.parse_text(doc.text, doc.uri)
            return features.read_record(path)[1]

        return load

    def completion(self, params: Any) -> dict[str, Any]:
        found = self._at(params)
        if found is None:
            return {"isIncomplete": False, "items": []}
        document, line, col = found
        assert document.root is not None
        start, word = features.word_before(line, col)
        engine = self.engines.setdefault(document.root, Engine(document.root, freeze=True))
        names, more = features.completions(engine.ids(), word, self._loader(document.root))
        row = _field(_field(params, "position", dict), "line", int)
        span = _range(row, to_utf16(line, start), row, to_utf16(line, col))
        items = [
            {
                "label": name,
                "kind": 5 if "#" in name else 18,
                "filterText": name,
                "textEdit": {"range": span, "newText": name},
            }
            for name in names
        ]
        return {"isIncomplete": more, "items": items}

    def hover(self, params: Any) -> dict[str, Any] | None:
        found = self._at(params)
        if found is None:
            return None
        document, line, col = found
        assert document.root is not None
        reference = features.reference_at(line, col)
        if reference is None:
            return None
        spec, start, end = reference
        text = features.hover_text(spec, self._loader(document.root))
        if text is None:
            return None
        row = _field(_field(params, "position", dict), "line", int)
        span = _range(row, to_utf16(line, start), row, to_utf16(line, end))
        return {"contents": {"kind": "plaintext", "value": text}, "range": span}

    def definition(self, params: Any) -> dict[str, Any] | None:
        from kb.positions import locate

        found = self._at(params)
        if found is None:
            return None
        document, line, col = found
        assert document.root is not None
        reference = features.reference_at(line, col)
        if reference is None:
            return None
        spec = reference[0]
        target = features.record_path(document.root, spec.partition("#")[0])
        if target is None:
            return None
        text, _ = features.read_record(target)
        if text is None:
            return None
        at_line, at_col = locate(text, features.pointer_of(spec))
        rows = lines_of(text)
        row = max(at_line - 1, 0)
        units = to_utf16(rows[row], max(at_col - 1, 0)) if row < len(rows) else 0
        return {"uri": target.as_uri(), "range": _range(row, units, row, units)}

    def code_action(self, params: Any) -> list[dict[str, Any]]:
        uri = _uri(params)
        context = _field(params, "context", dict)
        actions = []
        for diagnostic in context.get("diagnostics") or []:
            data = diagnostic.get("data") if isinstance(diagnostic, dict) else None
            fix = data.get("fix") if isinstance(data, dict) else None
            if not isinstance(fix, dict) or not isinstance(fix.get("newText"), str):
                continue
            edit = {"changes": {uri: [{"range": fix.get("range"), "newText": fix["newText"]}]}}
            actions.append(
                {
                    "title": f"{diagnostic.get('code', 'kb')}: replace with {fix['newText']!r}",
                    "kind": "quickfix",
                    "diagnostics": [diagnostic],
                    "edit": edit,
                }
            )
        return actions


_REQUESTS: dict[str, Callable[[Server, Any], Any]] = {
    "initialize": Server.initialize,
    "shutdown": Server.shutdown,
    "textDocument/completion": Server.completion,
    "textDocument/hover": Server.hover,
    "textDocument/definition": Server.definition,
    "textDocument/codeAction": Server.code_action,
}
_NOTIFICATIONS: dict[str, Callable[[Server, Any], Any]] = {
    "initialized": lambda server, params: None,
    "textDocument/didOpen": Server.did_open,
    "textDocument/didChange": Server.did_change,
    "textDocument/didClose": Server.did_close,
    "textDocument/didSave": Server.did_save,
    "workspace/didChangeWatchedFiles": Server.watched_files,
    "$/cancelRequest": lambda server, params: None,  # every request is answered at once
    "$/setTrace": lambda server, params: None,
}


def _field(container: Any, name: str, kind: type) -> Any:
    if not isinstance(container, dict):
        raise BadParams(f"expected an object holding {name!r}")
    value = container.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BadParams(f"{name!r} must be {kind.__name__}, not {type(value).__name__}")
    return value


def _uri(params: Any) -> str:
    uri: str = _field(_field(params, "textDocument", dict), "uri", str)
    return uri


def _valid_id(value: Any) -> Any:
    """A JSON-RPC id (a string or a whole number), else None."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _range(line: int, col: int, end_line: int, end_col: int) -> dict[str, Any]:
    return {
        "start": {"line": line, "character": col},
        "end": {"line": end_line, "character": end_col},
    }


def _rows(findings: list[Finding]) -> list[tuple[str, int, int, str]]:
    return [(f.code, f.location.line, f.location.col, f.message) for f in findings]


def _under(uri: str, root: Path) -> bool:
    path = canonical(uri)
    return path is not None and root in path.parents


def _diagnostics(findings: list[Finding], text: str) -> list[dict[str, Any]]:
    """Findings as LSP diagnostics: UTF-16 columns, to the end of the finding's line."""
    rows = lines_of(text)
    out = []
    for finding in findings:
        row = max(finding.location.line - 1, 0)
        col = max(finding.location.col - 1, 0)
        line = rows[row] if row < len(rows) else ""
        start = to_utf16(line, min(col, len(line)))
        end = max(to_utf16(line, len(line)), start + 1)
        diagnostic: dict[str, Any] = {
            "range": _range(row, start, row, end),
            "severity": features.severity(finding),
            "code": finding.code,
            "source": "kb",
            "message": finding.message + (f"\nhint: {finding.hint}" if finding.hint else ""),
        }
        fix = features.suggested_fix(finding, line, min(col, len(line)))
        if fix is not None:
            begin, stop, new = fix
            span = _range(row, to_utf16(line, begin), row, to_utf16(line, stop))
            diagnostic["data"] = {"fix": {"range": span, "newText": new}}
        out.append(diagnostic)
    return out


def _log(text: str) -> None:
    print(f"kb lsp: {text}", file=sys.stderr, flush=True)


def serve(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Run the server on stdin/stdout until `exit`; the exit code LSP prescribes."""
    out = stdout or sys.stdout.buffer
    fd = (stdin or sys.stdin.buffer).fileno()
    sys.stdout = sys.stderr  # nothing but the protocol may reach stdout

    def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    def write_or_stop(data: bytes) -> None:
        try:
            write(data)
        except OSError:  # the editor closed our stdout: nobody is listening any more
            server.exit_code = 1

    server = Server(write_or_stop)
    frames: queue.Queue[tuple[float, Frame] | None] = queue.Queue()

    def read() -> None:
        reader = Reader(fd)
        while (frame := reader.read()) is not None:
            frames.put((time.monotonic(), frame))
        frames.put(None)

    def handle(item: tuple[float, Frame]) -> None:
        server.received, frame = item
        try:
            server.handle(frame)
        finally:
            server.received = None

    threading.Thread(target=read, name="kb-lsp-reader", daemon=True).start()

    def settle() -> bool:
        """Handle every frame already here; False at the end of the stream."""
        while server.exit_code is None:
            try:
                item = frames.get_nowait()
            except queue.Empty:
                return True
            if item is None:
                server.exit_code = 0 if server.shut_down else 1
                return False
            handle(item)
        return False

    while server.exit_code is None:
        try:
            got = frames.get(timeout=server.due())
        except queue.Empty:
            got = False  # type: ignore[assignment]
        if got is None:
            return 0 if server.shut_down else 1
        if got:
            handle(got)
        if not settle():
            break
        root = server.next_root()
        if root is not None:
            server.check(root, lambda: None if settle() else None)
    return server.exit_code if server.exit_code is not None else 1
