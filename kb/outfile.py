"""Write a report file (`kb validate -o PATH`) the way a careful tool does.

- Only a regular file is written. A directory, a FIFO, a device or a socket at PATH
  is refused (a usage error, exit 2): replacing it would destroy something that is
  not a report (`-o /dev/null` run as root would replace the system's null device).
- A symbolic link is not replaced: the file it leads to is written, if that is a
  regular file (or does not exist yet in an existing folder); otherwise refused.
- The file is written whole or not at all: a temporary file beside it, renamed over
  it; on any error the temporary file is removed and the old report is untouched.
- A new file gets the mode the umask gives (0644 under umask 022), as a shell's `>`
  would, not the temporary file's 0600; a file that exists keeps its mode.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from kb.usage import UsageProblem

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def report_target(path: Path, option: str = "-o/--output") -> tuple[Path, int]:
    """The regular file to write for `path` and the mode it gets; UsageProblem if none."""
    try:
        here = os.lstat(path)
    except FileNotFoundError:
        return path, 0o666 & ~_umask()
    except OSError as exc:
        raise UsageProblem(f"{option} {path}: {exc.strerror or exc}") from None
    target = path
    if stat.S_ISLNK(here.st_mode):
        target = Path(os.path.realpath(path))
        try:
            here = os.stat(target)
        except FileNotFoundError:
            if not target.parent.is_dir():
                raise UsageProblem(
                    f"{option} {path}: a symbolic link to {target}, whose folder does not exist"
                ) from None
            return target, 0o666 & ~_umask()
        except OSError as exc:
            raise UsageProblem(f"{option} {path}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(here.st_mode):
            raise UsageProblem(
                f"{option} {path}: a symbolic link to {_kind(here.st_mode)} ({target}); "
                "kb writes a report only to a regular file"
            )
    elif not stat.S_ISREG(here.st_mode):
        raise UsageProblem(
            f"{option} {path}: {_kind(here.st_mode)}; kb writes a report only to a regular file"
        )
    return target, stat.S_IMODE(here.st_mode)


def write_report(path: Path, text: str, option: str = "-o/--output") -> None:
    """Write `text` to the regular file `path` names, atomically; UsageProblem if it cannot."""
    target, mode = report_target(path, option)
    tmp: str | None = None
    try:
        handle, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.fchmod(handle, mode)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UsageProblem(f"{option} {path}: cannot write the report: {reason}") from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
