"""Writing the site: into a staging folder, unchanged files kept, then swapped in.

A build writes every file into a fresh staging folder next to the output. A file
whose bytes equal the previous build's is hard-linked from it instead of being
rewritten (so an incremental rebuild touches only the pages that changed), and
only a complete build is renamed into place. A failed or interrupted build
removes its staging folder and leaves the previous site as it was. The swap is
two renames in one folder; a crash between them leaves `<out>.old`, which the
next build restores before it starts.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kb.filelock import exclusive_lock


@dataclass
class SiteWriter:
    """Writes site files by relative POSIX path; remembers which ones changed."""

    staging: Path
    previous: Path | None
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    _folders: set[Path] = field(default_factory=set, repr=False)

    def write_text(self, relpath: str, text: str) -> None:
        self.write_bytes(relpath, text.encode("utf-8"))

    def write_bytes(self, relpath: str, data: bytes) -> None:
        target = self._target(relpath)
        if self._keep_previous(relpath, target, data):
            self.kept.append(relpath)
            return
        target.write_bytes(data)
        self.written.append(relpath)

    def reuse(self, relpath: str) -> bool:
        """Keep the previous build's file as it is, unread (its inputs did not change)."""
        if self.previous is None:
            return False
        old = self.previous / _safe_relative(relpath)
        target = self._target(relpath)
        try:
            if not stat.S_ISREG(old.lstat().st_mode):  # never carry a link over
                return False
            os.link(old, target, follow_symlinks=False)
        except OSError:
            return False
        self.kept.append(relpath)
        return True

    def _target(self, relpath: str) -> Path:
        target = self.staging / _safe_relative(relpath)
        if target.parent not in self._folders:  # one mkdir per folder, not per file
            target.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(target.parent)
        return target

    def _keep_previous(self, relpath: str, target: Path, data: bytes) -> bool:
        if self.previous is None:
            return False
        old = self.previous / _safe_relative(relpath)
        try:
            if old.stat().st_size != len(data) or old.read_bytes() != data:
                return False
            os.link(old, target)
        except OSError:
            return False
        return True


def _safe_relative(relpath: str) -> str:
    """Refuse absolute paths, `..` and empty or `.` segments (ids cannot produce them).

    The last guard before a write, on every file of the site: plain string tests,
    no path object per call.
    """
    parts = relpath.split("/")
    if relpath.startswith("/") or "\0" in relpath or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"unsafe site path {relpath!r}")
    return relpath


MARKER = ".kb-site"


class UnsafeOutputError(ValueError):
    """The output folder holds something other than a site kb built; it is never replaced."""


def check_output_folder(out_dir: Path) -> None:
    """Refuse to replace a non-empty folder no kb build wrote (`--out .` must not eat a repo)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UnsafeOutputError(f"{out_dir} is a file, not a site folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not _written_by_kb(out_dir):
        raise UnsafeOutputError(
            f"{out_dir} is not empty and was not written by kb build; refusing to replace it"
        )


def _written_by_kb(folder: Path) -> bool:
    """The marker, or the shape of a site built before the marker existed."""
    legacy = all((folder / name).is_file() for name in ("index.html", "search-index.js"))
    return (folder / MARKER).is_file() or legacy


@contextmanager
def staged_output(out_dir: Path) -> Iterator[SiteWriter]:
    """Yield a writer into a staging folder; publish it only if the block completes.

    Builds of one output take turns (a lock beside it): two at once both succeed,
    the second after the first, instead of renaming folders under each other.
    """
    out_dir = out_dir.resolve()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(out_dir.with_name(f".{out_dir.name}.lock")):
        with _staged(out_dir) as writer:
            yield writer


@contextmanager
def _staged(out_dir: Path) -> Iterator[SiteWriter]:
    _recover(out_dir)
    check_output_folder(out_dir)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.building-", dir=out_dir.parent))
    previous = out_dir if out_dir.is_dir() else None
    try:
        writer = SiteWriter(staging, previous)
        writer.write_text(MARKER, "A site written by `kb build`; each build replaces it whole.\n")
        yield writer
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _swap(staging, out_dir)


def _recover(out_dir: Path) -> None:
    """Undo a swap that a crash cut in half, and drop staging folders of dead builds."""
    old = out_dir.with_name(out_dir.name + ".old")
    if old.is_dir() and not out_dir.exists():
        old.rename(out_dir)
    for stale in out_dir.parent.glob(f".{out_dir.name}.building-*"):
        if stale.is_dir():  # the lock is ours: no live build owns a staging folder
            shutil.rmtree(stale, ignore_errors=True)


def _swap(staging: Path, out_dir: Path) -> None:
    staging.chmod(0o755)
    old = out_dir.with_name(out_dir.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if out_dir.exists():
        out_dir.rename(old)
    staging.rename(out_dir)
    shutil.rmtree(old, ignore_errors=True)
