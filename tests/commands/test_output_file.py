"""`kb validate -o PATH` writes only regular files, atomically, with the umask's mode
(issue 37: T3-04): a device, a FIFO, a socket or a directory is refused (exit 2); a
symbolic link is followed to the regular file it names, never replaced."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from tests.conftest import source_yaml, write_tree


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml()})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _validate(out: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["validate", "--full", "-o", str(out)])
    return result.exit_code, result.output


def _refused(out: Path, words: str) -> None:
    before = os.lstat(out)
    code, output = _validate(out)
    assert code == 2, output
    assert words in output and "kb writes a report only to a regular file" in output, output
    assert "Traceback" not in output and "internal error" not in output
    after = os.lstat(out)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)  # left alone
    assert [p.name for p in out.parent.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a device needs root")
def test_a_device_is_refused_not_replaced(tree: Path) -> None:
    device = tree / "nulldev"
    os.mknod(device, 0o644 | stat.S_IFCHR, os.makedev(1, 3))
    _refused(device, "a character device")


def test_a_fifo_is_refused(tree: Path) -> None:
    fifo = tree / "fifo"
    os.mkfifo(fifo)
    _refused(fifo, "a FIFO")


def test_a_socket_is_refused(tree: Path) -> None:
    path = tree / "sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        _refused(path, "a socket")
    finally:
        server.close()


def test_a_link_to_a_fifo_is_refused(tree: Path) -> None:
    os.mkfifo(tree / "fifo")
    (tree / "link").symlink_to("fifo")
    _refused(tree / "link", "a symbolic link to a FIFO")


def test_a_directory_is_refused(tree: Path) -> None:
    (tree / "folder").mkdir()
    code, output = _validate(tree / "folder")
    assert code == 2 and "is a directory" in output, output
    assert (tree / "folder").is_dir()


def test_a_link_to_a_regular_file_writes_the_file_and_keeps_the_link(tree: Path) -> None:
    (tree / "reports").mkdir()
    (tree / "reports" / "last.txt").write_text("old\n", encoding="utf-8")
    os.chmod(tree / "reports" / "last.txt", 0o640)
    (tree / "link").symlink_to("reports/last.txt")
    code, output = _validate(tree / "link")
    assert code == 0, output
    assert (tree / "link").is_symlink()
    written = (tree / "reports" / "last.txt").read_text(encoding="utf-8")
    assert written != "old\n" and written.strip()
    assert stat.S_IMODE(os.stat(tree / "reports" / "last.txt").st_mode) == 0o640  # kept


def test_a_dangling_link_writes_its_target(tree: Path) -> None:
    (tree / "link").symlink_to("fresh.txt")
    code, output = _validate(tree / "link")
    assert code == 0, output
    assert (tree / "link").is_symlink() and (tree / "fresh.txt").is_file()


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_report_gets_the_umask_s_mode(tree: Path, umask: int, mode: int) -> None:
    previous = os.umask(umask)
    try:
        code, output = _validate(tree / "report.txt")
    finally:
        os.umask(previous)
    assert code == 0, output
    assert stat.S_IMODE(os.stat(tree / "report.txt").st_mode) == mode
