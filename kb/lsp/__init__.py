"""`kb lsp`: kb's findings inside the editor, over the Language Server Protocol (stdio).

Every open record is checked by kb's own checker as the author types (the buffer
stands in for the file, kb.overlay, as for `kb validate -`), and each finding becomes a
diagnostic at kb's line:col (in UTF-16 columns, as announced) with its rule code and
hint. The tree is loaded once; a change re-checks only the changed buffer and what
reads it (kb.lsp.engine, on kb.reads' dependency graph, as kb.incremental does), so
editing a hardware record re-publishes the diagnostics of an open flop class that
binds it, in tens of milliseconds. Completion offers record ids in reference fields and
`record#field` paths in bindings (triggered by `/` and `#`, as `textEdit`s); hover on
a reference shows the target's figure (value, unit, basis, source); go-to-definition
opens the referenced record at its field; a hint that says "did you mean 'x'?" is a
quick fix.

The server is as hard as `kb validate`: paths are canonicalised as the loader does
(kb.lsp.text), files are read only through kb.fileread, a bad frame is answered and
survived (kb.lsp.framing), and no handler's exception reaches the client
(kb.lsp.server). It needs nothing beyond kb's own dependencies.
"""

from __future__ import annotations


def serve() -> int:
    """Run the language server on stdin/stdout until the client exits; its exit code."""
    from kb.lsp.server import serve as run

    return run()
