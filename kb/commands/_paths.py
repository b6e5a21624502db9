"""Paths named on the command line must be records of the tree, or kb says so (exit 2).

`kb validate README.md`, a YAML file outside records/, or a folder without records
used to check nothing and report "checked 0 records: no findings". Each is now a
usage error that names the path and says why. A `.yml` file inside the tree is a
record file with the wrong extension: it passes here and the loader refuses it
with LD012, the same finding a full run gives it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import click


def refuse_non_records(root: Path, paths: Sequence[Path]) -> None:
    """A usage error naming every path in `paths` that is not a record of the tree."""
    problems = [f"{path}: {problem}" for path in paths if (problem := _problem(root, path))]
    if problems:
        raise click.UsageError("\n".join(problems))


def refuse_stdin_filename(root: Path, name: Path) -> None:
    """A usage error unless `name` could be a record file of the tree (it need not exist)."""
    problem = _not_a_record_name(name) or _outside(root, name)
    if problem is None and name.is_dir():
        problem = "is a folder; --stdin-filename names the record file stdin stands for"
    if problem is not None:
        raise click.UsageError(f"--stdin-filename {name}: {problem}")


def _problem(root: Path, path: Path) -> str | None:
    if not path.is_dir() and _not_a_record_name(path):
        return _not_a_record_name(path)
    outside = _outside(root, path)
    if outside is not None:
        return outside
    if path.is_dir():
        from kb.loader import record_files

        if record_files(root, [path]):
            return None
        return "holds no record files (*.yaml): nothing to check"
    return None


def _outside(root: Path, path: Path) -> str | None:
    if _within(os.path.abspath(path), os.path.abspath(root)) or _within(
        str(path.resolve()), str(root.resolve())
    ):
        return None
    return f"is not in the records tree {root} (name files under it, or give --root DIR)"


def _not_a_record_name(path: Path) -> str | None:
    from kb.loader import RECORD_SUFFIXES

    if path.name.endswith(RECORD_SUFFIXES):
        return None
    return "is not a record file: records are .yaml files under records/"


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
