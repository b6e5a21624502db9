"""Record bytes that stand in for a file of the tree: how `kb validate -` checks stdin.

An `Overlay` is a value, passed to the run that reads it (kb.api.validate's
`standing_in`, kb.checker's stages, the loader, the language server's plans): for
that run the loader reads `data` wherever it would read `path`, lists `path` among
the files of any folder that holds it (whether or not such a file exists on disk),
and the locate stage finds line:col in `data`. Paths are compared as absolute paths
(os.path.abspath: no file system access). Nothing is written to disk, and nothing
is kept in a module global: a run given no overlay (`NONE`) reads files only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType


def _nothing() -> Mapping[str, bytes]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Overlay:
    """The records standing in for files, by absolute path (immutable)."""

    files: Mapping[str, bytes] = field(default_factory=_nothing)

    def __bool__(self) -> bool:
        return bool(self.files)

    def standing_in(self, path: str | os.PathLike[str], data: bytes) -> Overlay:
        """The overlay with `data` standing in for `path` as well as what this one holds."""
        return Overlay(MappingProxyType({**self.files, os.path.abspath(path): data}))

    def read(self, path: str | os.PathLike[str]) -> bytes | None:
        """The bytes standing in for `path`, or None (read the file)."""
        return self.files.get(os.path.abspath(path)) if self.files else None

    def paths(self) -> list[Path]:
        """Every path something stands in for (absolute)."""
        return [Path(name) for name in self.files]

    def files_under(self, targets: Iterable[Path], listed: Iterable[Path]) -> list[Path]:
        """The stand-in paths under (or equal to) one of `targets` that `listed` lacks."""
        if not self.files:
            return []
        present = {os.path.abspath(path) for path in listed}
        folders = [os.path.abspath(target) for target in targets]
        return [
            Path(name)
            for name in self.files
            if name not in present
            and any(
                name == folder or name.startswith(folder.rstrip(os.sep) + os.sep)
                for folder in folders
            )
        ]


NONE = Overlay()  # no record stands in for a file: every file is read from disk


def standing_in(path: str | os.PathLike[str], data: bytes) -> Overlay:
    """An overlay in which `data` is the content of `path` for the loader and the checker."""
    return NONE.standing_in(path, data)
