"""Editing as an author does: what a change reaches is re-published, quick typing is one check.

The server re-checks the edited buffer and what reads it (kb.reads' graph), publishes
for the documents affected (open or not: a file whose findings the buffer changes),
clears a file's diagnostics when the buffer that changed them closes, and coalesces a
burst of changes into the check of the last text.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.diff.test_knowledge_diff import USER, _figure
from tests.lsp.client import Client


def test_a_figure_edit_publishes_for_the_unopened_record_that_binds_it(
    server: Client, tree: Path
) -> None:
    figure = server.open((tree / "flops" / "source-figure.yaml").as_uri(), _figure(4, 1))
    assert server.diagnostics_for(figure) == []
    server.change(figure, _figure(8, 2), 2)
    user = (tree / "flops" / "user.yaml").as_uri()  # never opened
    codes = sorted(d["code"] for d in server.diagnostics_for(user))
    assert codes == ["EQ007", "EQ017"]
    server.change(figure, _figure(4, 1), 3)  # undone: what it caused is cleared
    assert server.diagnostics_for(user) == []
    server.change(figure, _figure(8, 2), 4)
    assert server.diagnostics_for(user)
    server.send("textDocument/didClose", {"textDocument": {"uri": figure}})
    assert server.diagnostics_for(user) == []  # the disk says 4 again


def test_forty_quick_changes_are_checked_as_the_last_and_a_hover_is_not_delayed(
    server: Client, tree: Path
) -> None:
    uri = server.open((tree / "flops" / "user.yaml").as_uri(), USER)
    assert server.diagnostics_for(uri) == []
    broken = USER.replace('expr: "x = k*I"', 'expr: "x = k*I +"')
    for version in range(2, 42):
        server.change(uri, broken if version % 2 else USER, version)
    server.change(uri, broken, 42)
    row = USER.splitlines().index("      I: flops/source-figure#arithmetic_intensity.value")
    started = time.monotonic()
    position = {"line": row, "character": 15}
    hover = server.request(
        "textDocument/hover", {"textDocument": {"uri": uri}, "position": position}
    )
    assert hover is not None and time.monotonic() - started < 5
    published = []
    deadline = time.monotonic() + 60
    while not published or published[-1] != ["EQ001"]:
        message = server.read(max(deadline - time.monotonic(), 0.01))
        if message.get("method") == "textDocument/publishDiagnostics":
            published.append([d["code"] for d in message["params"]["diagnostics"]])
    assert len(published) <= 3, published  # coalesced: not one check per change


def test_a_change_on_disk_the_editor_reports_is_seen(server: Client, tree: Path) -> None:
    user = server.open((tree / "flops" / "user.yaml").as_uri(), USER)
    assert server.diagnostics_for(user) == []
    figure = tree / "flops" / "source-figure.yaml"
    figure.write_text(_figure(8, 2))  # saved by another program
    changes = [{"uri": figure.as_uri(), "type": 2}]
    server.send("workspace/didChangeWatchedFiles", {"changes": changes})
    assert sorted(d["code"] for d in server.diagnostics_for(user)) == ["EQ007", "EQ017"]
