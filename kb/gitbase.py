"""Read the records as they were at a git revision, for `kb validate --base REV`.

Only records that changed since REV are read back (`git diff --name-status`),
so the cost is proportional to the change, not to the knowledge base.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from kb.loader import display_path, identity_from_path, parse_document
from kb.model import KnowledgeBase, Record
from kb.overlay import NONE, Overlay


class GitBaseError(Exception):
    """The revision or the repository could not be read (a usage error)."""


def attach_base(kb: KnowledgeBase, root: Path, rev: str, standing_in: Overlay = NONE) -> None:
    """Fill kb.base (changed records at REV) and kb.deleted (records removed since REV)."""
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip())
    _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    changes = _git(
        top, "diff", "--no-renames", "--name-status", "-z", rev, "--", str(root.resolve())
    )
    fields = [f for f in changes.split("\0") if f]
    base: dict[str, Record] = {}
    kb.base = base
    for status, relative in zip(fields[::2], fields[1::2], strict=False):
        if not relative.endswith(".yaml") or status not in ("M", "D", "T"):
            continue
        record = _record_at(top, root, rev, relative)
        if record is None:
            continue
        if status == "D":
            kb.deleted[record.id] = record
        else:
            base[record.id] = record
    _attach_stand_ins(kb, base, top, root, rev, standing_in)


def _attach_stand_ins(
    kb: KnowledgeBase,
    base: dict[str, Record],
    top: Path,
    root: Path,
    rev: str,
    standing_in: Overlay,
) -> None:
    """`kb validate -`: git compared the file on disk; stdin's record is compared here."""
    for path in standing_in.paths():
        relative = Path(os.path.relpath(path, top.resolve())).as_posix()
        if relative.startswith("../") or not relative.endswith(".yaml"):
            continue
        record = _record_at(top, root, rev, relative)
        if record is not None:
            kb.deleted.pop(record.id, None)  # gone from disk, but here it is
            base[record.id] = record


def _record_at(top: Path, root: Path, rev: str, relative: str) -> Record | None:
    try:
        text = _git(top, "show", f"{rev}:{relative}")
    except GitBaseError:
        return None
    data, _ = parse_document(text, relative)
    if data is None:
        return None
    path = top / relative
    record_id, kind = identity_from_path(root, path)
    return Record(record_id, kind, display_path(path), data)


def _git(cwd: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise GitBaseError(f"cannot run git: {exc}") from None
    if done.returncode != 0:
        detail = done.stderr.strip() or f"git {' '.join(args)} failed"
        raise GitBaseError(detail)
    return done.stdout
