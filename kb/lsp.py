"""`kb lsp`: kb's findings inside the editor, over the Language Server Protocol (stdio).

Every open record is checked by kb's own checker as the author types (the buffer
stands in for the file, kb.overlay, as for `kb validate -`), and each finding becomes a
diagnostic at kb's line:col with its rule code and hint. Every open record is
re-checked on each change, so editing a hardware record re-publishes the diagnostics
of an open flop class that binds it. Completion offers record ids in reference fields
and `record#field` paths in bindings; hover on a reference shows the target's figure
(value, unit, basis, source); go-to-definition opens the referenced record at its field.

pygls is an optional dependency (`pip install 'kb-placement-tax[lsp]'`), imported only
when `kb lsp` runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from kb.findings import Finding, Severity

_TOKEN = re.compile(r"[A-Za-z0-9._/#-]+$")
_REFERENCE = re.compile(r"[a-z0-9][a-z0-9._-]*(?:/[a-z0-9][a-z0-9._-]*)+(?:#[A-Za-z0-9_.]+)?")


def check_open(root: Path, documents: Mapping[Path, str]) -> dict[Path, list[Finding]]:
    """Kb's findings on each open document, the buffers standing in for their files."""
    from kb import overlay
    from kb.api import validate

    with ExitStack() as stack:
        for path, text in documents.items():
            stack.enter_context(overlay.standing_in(path, text.encode("utf-8")))
        result = validate(root, sorted(documents))
    by_path: dict[Path, list[Finding]] = {path: [] for path in documents}
    for finding in result.findings:
        found = Path(finding.location.path).resolve()
        if found in by_path:
            by_path[found].append(finding)
    return by_path


def records_root(path: Path) -> Path | None:
    """The `records` folder a document lives in, or None (not a record: not checked)."""
    for parent in path.resolve().parents:
        if parent.name == "records":
            return parent
    return None


def diagnostic_fields(finding: Finding, lines: list[str]) -> dict[str, Any]:
    """A finding as LSP diagnostic fields: 0-based range to the end of its line."""
    line = max(finding.location.line - 1, 0)
    col = max(finding.location.col - 1, 0)
    end = len(lines[line]) if line < len(lines) else col
    message = finding.message + (f"\nhint: {finding.hint}" if finding.hint else "")
    severity = {Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 3}[finding.severity]
    return {
        "range": ((line, col), (line, max(end, col + 1))),
        "severity": severity,
        "code": finding.code,
        "message": message,
    }


def completions(root: Path, line_text: str) -> list[str]:
    """Record ids (or `id#field` paths after a `#`) that complete the word before the cursor."""
    from kb.api import open_kb
    from kb.equations.bind import field_paths

    match = _TOKEN.search(line_text)
    word = match.group(0) if match else ""
    kb = open_kb(root)
    if "#" in word:
        record_id, _, typed = word.partition("#")
        record = kb.get(record_id)
        if record is None:
            return []
        return [f"{record_id}#{p}" for p in field_paths(record.data) if p.startswith(typed)]
    return sorted(r.id for r in kb if r.id.startswith(word))


def hover_text(root: Path, line_text: str, col: int) -> str | None:
    """What a reference under the cursor names: a record's title, or a figure's provenance."""
    from kb.api import open_kb

    for match in _REFERENCE.finditer(line_text):
        if match.start() <= col <= match.end():
            record_id, _, path = match.group(0).partition("#")
            record = open_kb(root).get(record_id)
            if record is None:
                return None
            if not path:
                return f"{record.kind} {record.id}: {record.data.get('title', '')}"
            return _figure_text(match.group(0), record.get(path))
    return None


def definition(root: Path, line_text: str, col: int) -> tuple[Path, int, int] | None:
    """The file and 0-based line:col a reference under the cursor names (its field, if any)."""
    from kb.positions import locate

    for match in _REFERENCE.finditer(line_text):
        if match.start() <= col <= match.end():
            record_id, _, path = match.group(0).partition("#")
            target = root / f"{record_id}.yaml"
            if not target.is_file():
                return None
            pointer = "".join(f"/{part}" for part in path.split(".")) if path else ""
            line, column = locate(target.read_text(encoding="utf-8"), pointer)
            return target, line - 1, column - 1
    return None


def _figure_text(spec: str, target: Any) -> str:
    if isinstance(target, Mapping) and "value" in target:
        parts = [f"{target.get('value')} {target.get('unit', '')}".strip()]
        parts += [f"{key}: {target[key]}" for key in ("basis", "source", "note") if key in target]
        return f"{spec} = " + "; ".join(str(p) for p in parts)
    return f"{spec} = {target!r}"


def uri_path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def serve() -> None:  # pragma: no cover - exercised over stdio by tests/test_lsp.py
    """Run the language server on stdin/stdout until the client exits."""
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    from kb import __version__

    server = LanguageServer(
        "kb", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full
    )

    def publish(changed: str) -> None:
        root = records_root(uri_path(changed))
        if root is None:
            return
        open_docs = {
            uri_path(doc.uri): doc.source
            for doc in server.workspace.text_documents.values()
            if records_root(uri_path(doc.uri)) == root
        }
        for path, findings in check_open(root, open_docs).items():
            lines = open_docs[path].splitlines()
            diagnostics = [_diagnostic(types, diagnostic_fields(f, lines)) for f in findings]
            params = types.PublishDiagnosticsParams(uri=path.as_uri(), diagnostics=diagnostics)
            server.text_document_publish_diagnostics(params)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION)
    def complete(params: types.CompletionParams) -> types.CompletionList:
        root = records_root(uri_path(params.text_document.uri))
        line = _line(server, params.text_document.uri, params.position)
        names = completions(root, line) if root else []
        items = [types.CompletionItem(label=name) for name in names[:200]]
        return types.CompletionList(is_incomplete=len(names) > 200, items=items)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        root = records_root(uri_path(params.text_document.uri))
        document = server.workspace.get_text_document(params.text_document.uri)
        lines = document.source.splitlines()
        row = params.position.line
        text = (
            hover_text(root, lines[row], params.position.character)
            if root and row < len(lines)
            else None
        )
        return types.Hover(contents=text) if text else None

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def goto(params: types.DefinitionParams) -> types.Location | None:
        root = records_root(uri_path(params.text_document.uri))
        lines = server.workspace.get_text_document(params.text_document.uri).source.splitlines()
        row = params.position.line
        if root is None or row >= len(lines):
            return None
        found = definition(root, lines[row], params.position.character)
        if found is None:
            return None
        path, line, col = found
        at = types.Position(line=line, character=col)
        return types.Location(uri=path.as_uri(), range=types.Range(start=at, end=at))

    server.start_io()


def _line(server: Any, uri: str, position: Any) -> str:
    lines = server.workspace.get_text_document(uri).source.splitlines()
    row = position.line
    return str(lines[row][: position.character]) if row < len(lines) else ""


def _diagnostic(types: Any, fields: dict[str, Any]) -> Any:
    (line, col), (end_line, end_col) = fields["range"]
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=line, character=col),
            end=types.Position(line=end_line, character=end_col),
        ),
        message=fields["message"],
        severity=types.DiagnosticSeverity(fields["severity"]),
        code=fields["code"],
        source="kb",
    )
