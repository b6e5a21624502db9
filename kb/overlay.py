"""Record bytes that stand in for a file of the tree: how `kb validate -` checks stdin.

While `standing_in(path, data)` is open, the loader reads `data` wherever it would
read `path`, lists `path` among the files of any folder that holds it (whether or
not such a file exists on disk), and the checker locates findings in `data`. Paths
are compared as absolute paths (os.path.abspath: no file system access). Nothing is
written to disk; outside the block kb reads files only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType

_NONE: Mapping[str, bytes] = MappingProxyType({})
_STANDING_IN: ContextVar[Mapping[str, bytes]] = ContextVar("kb_overlay", default=_NONE)


@contextmanager
def standing_in(path: Path, data: bytes) -> Iterator[None]:
    """Within the block, `data` is the content of `path` for the loader and the checker."""
    token = _STANDING_IN.set(MappingProxyType({**_STANDING_IN.get(), os.path.abspath(path): data}))
    try:
        yield
    finally:
        _STANDING_IN.reset(token)


def read(path: str | os.PathLike[str]) -> bytes | None:
    """The bytes standing in for `path`, or None (read the file)."""
    standing = _STANDING_IN.get()
    return standing.get(os.path.abspath(path)) if standing else None


def paths() -> list[Path]:
    """Every path something stands in for (absolute)."""
    return [Path(name) for name in _STANDING_IN.get()]


def files_under(targets: Iterable[Path], listed: Iterable[Path]) -> list[Path]:
    """The stand-in paths under (or equal to) one of `targets` that `listed` lacks."""
    standing = _STANDING_IN.get()
    if not standing:
        return []
    present = {os.path.abspath(path) for path in listed}
    folders = [os.path.abspath(target) for target in targets]
    return [
        Path(name)
        for name in standing
        if name not in present
        and any(
            name == folder or name.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders
        )
    ]
