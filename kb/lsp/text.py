"""Documents as the server sees them: their URI made a canonical path, UTF-16 positions.

`canonical(uri)`: a `file:` URI as the path the loader lists for it: its folder
resolved (`..`, `.` and symlinked folders gone, as kb.loader's PathResolver does),
its name kept (a symlinked record file is listed under its own name). Anything
else, an `untitled:` buffer, a URI with a NUL or a name that is not UTF-8, is not
a record: None, and the server leaves it alone.

LSP positions count UTF-16 code units (the encoding the server announces); kb and
Python count code points. `to_utf16` and `from_utf16` convert a column of one line.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from kb.loader import RECORD_SUFFIXES


def canonical(uri: str) -> Path | None:
    """The record path a `file:` URI names, as the loader lists it, or None."""
    try:
        parsed = urlparse(uri)
    except ValueError:
        return None
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    try:
        name = unquote(parsed.path, errors="strict")
    except UnicodeDecodeError:  # percent-escapes that are not UTF-8
        return None
    if not name.startswith("/") or "\x00" in name:
        return None
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no such file name
        return None
    path = Path(name)
    if not path.name.endswith(RECORD_SUFFIXES):
        return None
    try:
        folder = os.path.realpath(path.parent)
    except (OSError, ValueError):
        return None
    return Path(folder) / path.name


def records_root(path: Path) -> Path | None:
    """The `records` folder a canonical path lives in, or None (not a record: not checked)."""
    for parent in path.parents:
        if parent.name == "records":
            return parent
    return None


def to_utf16(line: str, col: int) -> int:
    """The UTF-16 column of code-point column `col` of `line`."""
    prefix = line[:col]
    return col + sum(1 for ch in prefix if ord(ch) > 0xFFFF)


def from_utf16(line: str, units: int) -> int:
    """The code-point column of UTF-16 column `units` of `line` (clamped to the line)."""
    count = 0
    for index, ch in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def lines_of(text: str) -> list[str]:
    """The lines of a document as LSP counts them (LF, CRLF or CR ends one)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def apply_change(text: str, change: object) -> str:
    """A document after one `contentChanges` entry (a whole text, or a UTF-16 range)."""
    if not isinstance(change, dict) or not isinstance(change.get("text"), str):
        raise ValueError("a content change needs a `text` string")
    new: str = change["text"]
    span = change.get("range")
    if span is None:
        return new
    if not isinstance(span, dict):
        raise ValueError("a content change's range must be an object")
    start, end = _offset(text, span.get("start")), _offset(text, span.get("end"))
    if end < start:
        raise ValueError("a content change's range ends before it starts")
    return text[:start] + new + text[end:]


def _offset(text: str, position: object) -> int:
    if not isinstance(position, dict):
        raise ValueError("a range needs a start and an end position")
    line, units = position.get("line"), position.get("character")
    if not isinstance(line, int) or not isinstance(units, int) or line < 0 or units < 0:
        raise ValueError("a position needs a line and a character, whole numbers >= 0")
    offset = 0
    rows = text.split("\n")
    for row in rows[:line]:
        offset += len(row) + 1
    if line >= len(rows):
        return len(text)
    return offset + from_utf16(rows[line].rstrip("\r"), units)
