"""Read a record file with a size cap, whatever its name points to.

A record is a regular file. A symlink may point at a FIFO (opening it would block
forever), a device (`/dev/zero` never ends, and reports size 0) or a socket; none
of them is a record. The file is opened without blocking, checked with `fstat` on
the open descriptor (no race between the check and the read), and read to at most
`limit + 1` bytes, so what a path points to can never make kb hang or exhaust
memory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


class NotARegularFile(OSError):
    """The path names something that is not a regular file."""


class TooLarge(OSError):
    """The file holds more than the limit; `size` is what was seen (at least limit + 1)."""

    def __init__(self, size: int) -> None:
        super().__init__(f"over the limit at {size:,} bytes")
        self.size = size


def read_limited(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file at `path`, refusing more than `limit` bytes.

    Raises NotARegularFile, TooLarge or the OSError of the open or read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            raise NotARegularFile(f"not a regular file: it is {describe_mode(found.st_mode)}")
        return _read_at_most(descriptor, limit, found.st_size)
    finally:
        os.close(descriptor)


def describe_mode(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def _read_at_most(descriptor: int, limit: int, size: int) -> bytes:
    """Read to the end, or to one byte over `limit`; the first read asks for `size` + 1."""
    chunks: list[bytes] = []
    total, want = 0, size + 1
    while total <= limit:
        chunk = os.read(descriptor, min(want, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        want = 1 << 20  # the file grew, or fstat's size was not its length (/proc)
    raise TooLarge(total)
