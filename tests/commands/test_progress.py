"""Progress on long work: stage, count and rate on a terminal's stderr; silent when piped or -q."""

from __future__ import annotations

import io
import os
import pty
import subprocess
from pathlib import Path

import pytest

from kb import progress
from tests.conftest import kb_executable, source_yaml, write_tree


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("progress")
    files = {f"sources/doc-{i:02}.yaml": source_yaml(f"sources/doc-{i:02}") for i in range(30)}
    write_tree(top / "records", files)
    return top


def run_with_tty_stderr(cwd: Path, *args: str) -> tuple[int, str, str]:
    """Run kb with stderr on a pseudo-terminal (stdout piped); returns code, stdout, stderr."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "200"}
    with subprocess.Popen(
        [*kb_executable(), *args], cwd=cwd, stdout=subprocess.PIPE, stderr=follower, env=env
    ) as child:
        os.close(follower)
        out, _ = child.communicate(timeout=120)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the child
                break
            if not chunk:
                break
            seen += chunk
    os.close(leader)
    return child.returncode, out.decode(), seen.decode()


def test_a_terminal_sees_each_stage_with_its_count_then_the_line_is_erased(tree: Path) -> None:
    code, out, err = run_with_tty_stderr(tree, "validate", "--full")
    assert (code, out) == (0, "checked 30 records: no findings\n")
    assert "kb: load..." in err
    for stage in ("load 30 ", "schema 30 ", "rules 30 ", "locate "):
        assert stage in err, err
    assert err.endswith("\r"), repr(err[-40:])  # erased: the report starts on a clean line
    assert err.rstrip("\r").split("\r")[-1].strip() == ""


def test_quiet_on_a_terminal_shows_nothing(tree: Path) -> None:
    code, out, err = run_with_tty_stderr(tree, "validate", "--full", "-q")
    assert (code, out, err) == (0, "", "")


def test_piped_stderr_shows_nothing(tree: Path) -> None:
    done = subprocess.run(
        [*kb_executable(), "validate", "--full"], cwd=tree, capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stderr == ""


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_line_keeps_the_newest_stages_in_a_narrow_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    stream = Terminal()
    assert progress.wanted(stream=stream) and not progress.wanted(True, stream)
    line = progress.Line(stream)
    for name in ("load", "schema", "equations", "rules"):
        line.end(name, 10_000, 2.0)
    painted = stream.getvalue().split("\r")[-1]
    assert len(painted.rstrip()) <= 39
    assert painted.startswith("kb: ... ") and "rules 10,000 2.0 s (5,000/s)" in painted
    line.clear()
    assert stream.getvalue().endswith("\r")


def test_a_stage_reports_nothing_unless_reporting_is_on() -> None:
    calls = []

    @progress.stage("demo")
    def work() -> list[int]:
        calls.append(1)
        return [1, 2, 3]

    stream = Terminal()
    assert work() == [1, 2, 3] and stream.getvalue() == ""
    with progress.reporting(True, stream):
        assert work() == [1, 2, 3]
    assert "demo 3 " in stream.getvalue() and len(calls) == 2
