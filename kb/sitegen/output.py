"""Writing the site: changed files staged beside it, then published by renames.

A build writes each file into a fresh staging folder next to the output, unless
the published site already holds those bytes (compared, or its page key
unchanged: `reuse`), which are left where they are: a rebuild after one change
touches only the files that changed, not the 20,000 it keeps. A failed or
interrupted build removes its staging folder and leaves the published site as it
was.

How a complete build is published (`publish`):

* no site yet: the staging folder is renamed into place, whole;
* a site with few changes (the usual rebuild): a journal naming every staged file
  and every file to delete is written, atomically, into the staging folder; then
  each staged file is renamed over its published one (new files first, the
  manifest last, deletions after them all) and the staging folder removed. A
  reader never sees a half-written file: each rename replaces a whole file by a
  whole file. While the renames run (milliseconds for a few hundred pages) a
  reader may see some pages of the new build beside others of the last one,
  never a page missing that a page it came from links (deletions come last). A
  build killed during the renames leaves its journal: the next build, before it
  reads anything, finishes them (`_recover`), so the site becomes exactly the
  build that was being published; a build killed before the journal leaves the
  published site untouched;
* a site where most files change (new templates, new code) or where a file must
  go where the site has a folder: every kept file is hard-linked into the
  staging folder and the folder swapped in whole (two renames in one folder; a
  crash between them leaves `<out>.old`, which the next build restores).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kb.filelock import exclusive_lock
from kb.sitegen.manifest import MANIFEST
from kb.store import atomic_write

SITE, JOURNAL = "site", "journal.json"  # in a staging folder: the staged files, the journal


@dataclass
class SiteWriter:
    """Writes site files by relative POSIX path; remembers which ones changed.

    `previous` is the published site (None before the first build) and `published`
    its regular files, by relative path (listed once, before the build writes).
    """

    staging: Path
    previous: Path | None
    published: frozenset[str] = frozenset()
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    _folders: set[Path] = field(default_factory=set, repr=False)

    def write_text(self, relpath: str, text: str) -> None:
        self.write_bytes(relpath, text.encode("utf-8"))

    def write_bytes(self, relpath: str, data: bytes) -> None:
        _safe_relative(relpath)
        if self._holds(relpath, data):
            self.kept.append(relpath)
            return
        self._target(relpath).write_bytes(data)
        self.written.append(relpath)

    def reuse(self, relpath: str) -> bool:
        """Keep the published file as it is, unread (its inputs did not change)."""
        if _safe_relative(relpath) not in self.published:  # never carry a link over
            return False
        self.kept.append(relpath)
        return True

    def _target(self, relpath: str) -> Path:
        target = self.staging / relpath
        if target.parent not in self._folders:  # one mkdir per folder, not per file
            target.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(target.parent)
        return target

    def _holds(self, relpath: str, data: bytes) -> bool:
        """True when the published site has these bytes at `relpath` (a regular file)."""
        if self.previous is None or relpath not in self.published:
            return False
        old = self.previous / relpath
        try:
            return old.stat().st_size == len(data) and old.read_bytes() == data
        except OSError:
            return False


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
    the second after the first, instead of renaming files under each other.
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
    folder = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.building-", dir=out_dir.parent))
    previous = out_dir if out_dir.is_dir() else None
    try:
        files, others = _listing(previous)
        writer = SiteWriter(folder / SITE, previous, frozenset(files))
        writer.write_text(MARKER, "A site written by `kb build`; each build replaces it whole.\n")
        yield writer
        plan = _plan(writer, files, others)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    publish(writer, folder, out_dir, plan)


@dataclass(frozen=True)
class Plan:
    """How a build's staged files reach the published site (see the module docstring)."""

    moves: list[str]  # staged files to rename into place, in this order
    deletes: list[str]  # published files this build does not have
    whole: bool  # swap the staging folder in whole instead


def _listing(site: Path | None) -> tuple[set[str], set[str]]:
    """The published site's regular files, and everything else in it, by relative path."""
    files: set[str] = set()
    others: set[str] = set()
    if site is None:
        return files, others
    pending = [""]
    while pending:
        prefix = pending.pop()
        with os.scandir(site / prefix if prefix else site) as entries:
            for entry in entries:
                name = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append(name + "/")
                    others.add(name + "/")
                elif entry.is_file(follow_symlinks=False):
                    files.add(name)
                else:
                    others.add(name)
    return files, others


def _plan(writer: SiteWriter, files: set[str], others: set[str]) -> Plan:
    """Renames in place, unless there is no site yet, most files changed or a path clashes.

    `deletes` lists files first, then folders (ending in `/`, deepest first) that
    hold nothing of this build: a cold build has neither.
    """
    built = set(writer.written) | set(writer.kept)
    folders = {o for o in others if o.endswith("/")}
    taken = files | others
    clash = any(f"{p}/" in folders or _parents_clash(p, taken) for p in writer.written)
    if writer.previous is None or clash or len(writer.written) > len(writer.kept):
        return Plan([], [], True)
    needed = {"/".join(p.split("/")[:i]) + "/" for p in built for i in range(1, p.count("/") + 1)}
    deletes = sorted((files | others) - folders - built)
    deletes += sorted(folders - needed, key=lambda f: (-f.count("/"), f))
    added = [p for p in writer.written if p not in files and p != MANIFEST]
    replaced = [p for p in writer.written if p in files and p != MANIFEST]
    last = [MANIFEST] if MANIFEST in writer.written else []
    return Plan(added + replaced + last, deletes, False)


def _parents_clash(path: str, taken: set[str]) -> bool:
    """True when a folder `path` needs is a file or a link in the published site."""
    parts = path.split("/")[:-1]
    return any("/".join(parts[: i + 1]) in taken for i in range(len(parts)))


def publish(writer: SiteWriter, folder: Path, out_dir: Path, plan: Plan) -> None:
    """Put a complete build in place (see the module docstring), then drop its staging folder."""
    if plan.whole:
        staging = folder / SITE
        staging.mkdir(exist_ok=True)
        if writer.previous is not None:
            for relpath in writer.kept:
                target = staging / relpath
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(writer.previous / relpath, target, follow_symlinks=False)
        _swap(staging, out_dir)
        shutil.rmtree(folder, ignore_errors=True)
        return
    journal = {"moves": plan.moves, "deletes": plan.deletes}
    atomic_write(folder / JOURNAL, json.dumps(journal).encode("utf-8"))
    _commit(folder, out_dir, plan.moves, plan.deletes)


def _commit(folder: Path, out_dir: Path, moves: list[str], deletes: list[str]) -> None:
    """Rename the staged files into place and delete the rest; safe to run again."""
    staged, made = folder / SITE, set()
    for relpath in moves:
        source, target = staged / relpath, out_dir / relpath
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        try:
            os.replace(source, target)
        except FileNotFoundError:
            if source.exists():  # not "already moved": a real failure
                raise
    for relpath in deletes:  # files, then emptied folders, deepest first
        target = out_dir / relpath
        try:
            target.rmdir() if relpath.endswith("/") else target.unlink()
        except FileNotFoundError:
            pass
        except OSError:  # a folder something else still holds: a cold build has it too
            if not relpath.endswith("/"):
                raise
    shutil.rmtree(folder, ignore_errors=True)


def _recover(out_dir: Path) -> None:
    """Finish a publish a crash cut short, and drop the staging folders of dead builds."""
    old = out_dir.with_name(out_dir.name + ".old")
    if old.is_dir() and not out_dir.exists():
        old.rename(out_dir)
    for stale in sorted(out_dir.parent.glob(f".{out_dir.name}.building-*")):
        if not stale.is_dir():
            continue
        journal = _journal(stale / JOURNAL)
        if journal is not None and out_dir.is_dir():  # the lock is ours: its build is dead
            _commit(stale, out_dir, *journal)
        shutil.rmtree(stale, ignore_errors=True)


def _journal(path: Path) -> tuple[list[str], list[str]] | None:
    """The moves and deletes a journal names; None if there is none (or it is not one)."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict):
        return None
    moves, deletes = found.get("moves"), found.get("deletes")
    if not (isinstance(moves, list) and isinstance(deletes, list)):
        return None
    named = [*moves, *deletes]
    if not all(isinstance(p, str) and _is_safe(p.removesuffix("/")) for p in named):
        return None
    return moves, deletes


def _is_safe(relpath: str) -> bool:
    try:
        _safe_relative(relpath)
    except ValueError:
        return False
    return True


def _exchange(first: Path, second: Path) -> bool:
    """Swap two folders in one step (Linux renameat2 RENAME_EXCHANGE); False where unsupported.

    With two renames (the site aside, the new one in) a reader between them finds no
    file at all; exchanged, every path names the old build's file or the new one's.
    """
    import ctypes
    import errno

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not Linux, or a C library without it
        return False
    at_fdcwd, rename_exchange = -100, 2
    done = renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange)
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):  # kernel or file system lacks it
        return False
    raise OSError(code, os.strerror(code), str(second))


def _swap(staging: Path, out_dir: Path) -> None:
    staging.chmod(0o755)
    if out_dir.is_dir() and not out_dir.is_symlink() and _exchange(staging, out_dir):
        shutil.rmtree(staging, ignore_errors=True)  # the old build, now at staging's path
        return
    old = out_dir.with_name(out_dir.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if out_dir.exists():
        out_dir.rename(old)
    staging.rename(out_dir)
    shutil.rmtree(old, ignore_errors=True)
