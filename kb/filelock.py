"""An exclusive lock on a file, held for a block: concurrent kb runs take turns.

POSIX `flock` (or Windows `msvcrt.locking`) on a small lock file, removed when the
block ends so nothing is left beside the output. Removing it is safe because a
waiter that wins the lock checks it still holds the file at that path and starts
again if the file was removed meanwhile. The kernel releases the lock when the
process dies, so a killed build never leaves the next one waiting (it may leave
the empty lock file, which the next build takes over).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the block."""
    descriptor = _acquire(path)
    try:
        yield
    finally:
        try:
            os.unlink(path)  # still ours: waiters notice and start again
        except OSError:
            pass  # Windows keeps an open file; it is reused next time
        _unlock(descriptor)
        os.close(descriptor)


def _acquire(path: Path) -> int:
    while True:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        _lock(descriptor)
        try:
            if os.stat(path).st_ino == os.fstat(descriptor).st_ino:
                return descriptor
        except FileNotFoundError:
            pass  # removed by the holder we waited for
        _unlock(descriptor)
        os.close(descriptor)


try:
    import fcntl

    def _lock(descriptor: int) -> None:
        fcntl.flock(descriptor, fcntl.LOCK_EX)

    def _unlock(descriptor: int) -> None:
        fcntl.flock(descriptor, fcntl.LOCK_UN)

except ImportError:  # Windows
    import msvcrt

    def _lock(descriptor: int) -> None:
        while True:
            try:
                msvcrt.locking(descriptor, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
                return
            except OSError:  # LK_LOCK gives up after ten seconds: keep waiting
                continue

    def _unlock(descriptor: int) -> None:
        msvcrt.locking(descriptor, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
