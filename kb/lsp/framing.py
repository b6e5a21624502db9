r"""LSP base-protocol framing on a byte stream, hardened: a bad frame is answered, not fatal.

A message is `Content-Length: N\r\n` (other headers allowed) `\r\n` and N bytes
of JSON. What an editor or a broken client may send instead, and what happens:

- a length that is not a number, or over `MAX_BODY` (`99999999999999999999`):
  a `Frame` with an `error` (answered as -32700 "Parse error" by the server),
  then the stream is searched for the next `Content-Length:` header;
- a length shorter than the body: the N bytes fail to parse (an error frame), and
  the rest of the body is skipped up to the next header;
- a length longer than the body: when the next header follows a complete JSON
  value within the length (or already arrived, so that the reader does not wait
  for bytes that will never come), that value is the body (its frame says the
  length was wrong, and carries the id to answer);
- junk between messages: skipped up to the next header.

Nothing here reads more than `MAX_BODY` + one buffer at once, so no length can
exhaust memory; a header line is cut at `MAX_HEADER` bytes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

MAX_BODY = 64 * 1024 * 1024  # a record is at most 2 MiB; its JSON escape at most ~6x that
MAX_HEADER = 8192
_HEADER = b"Content-Length:"
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Frame:
    """One message read: its decoded JSON, or why there is none (`error`)."""

    message: Any = None
    error: str = ""
    request_id: Any = None  # the id of a message whose frame was wrong, when it could be read


class Reader:
    """Frames from a file descriptor, read with os.read (no buffering beyond our own)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.closed = False

    def _fill(self) -> bool:
        """Read what is available (blocking until something is); False at end of stream."""
        if self.closed:
            return False
        try:
            chunk = os.read(self.fd, _CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            self.closed = True
            return False
        self.buffer += chunk
        return True

    def _line(self) -> bytes | None:
        """One header line (without its end), at most MAX_HEADER bytes; None at end of stream."""
        while True:
            end = self.buffer.find(b"\n")
            if end != -1 and end <= MAX_HEADER:
                line, self.buffer = self.buffer[:end], self.buffer[end + 1 :]
                return line.rstrip(b"\r")
            if len(self.buffer) > MAX_HEADER:  # no line end in sight: keep only a tail
                cut = self.buffer.find(_HEADER, 1)
                self.buffer = self.buffer[cut:] if cut != -1 else self.buffer[-len(_HEADER) :]
                continue
            if not self._fill():
                if self.buffer:
                    line, self.buffer = self.buffer, b""
                    return line
                return None

    def read(self) -> Frame | None:
        """The next frame, or None at the end of the stream."""
        length: int | None = None
        problem = ""
        while True:
            line = self._line()
            if line is None:
                return None
            if not line.strip():
                if length is not None or problem:
                    break
                continue  # a blank line between messages
            at = line.find(_HEADER)
            if at > 0:  # the tail of a body a wrong length left behind, then a header
                line = line[at:]
            name, colon, value = line.partition(b":")
            if not colon:
                problem = problem or "a header line without a colon"
                continue
            if name.strip().lower() == b"content-length":
                text = value.strip()
                if not text.isdigit():
                    problem = f"Content-Length is not a number: {text[:40]!r}"
                elif len(text) > 12 or int(text) > MAX_BODY:
                    problem = (
                        f"Content-Length {text[:40].decode()} is over the {MAX_BODY:,}-byte limit"
                    )
                else:
                    length, problem = int(text), ""
        if length is None:
            return Frame(error=problem or "a message without Content-Length")
        return self._body(length)

    def _body(self, length: int) -> Frame:
        while len(self.buffer) < length:
            early = self._early_end()
            if early is not None:
                return early
            if not self._fill():
                body, self.buffer = self.buffer, b""
                return _decoded(body, f"the stream ended {length - len(body)} bytes early")
        frame = _decoded(self.buffer[:length], "")
        if frame.error:  # the next message may start inside this one's length
            early = self._value_then_header()
            if early is not None:
                return early
        self.buffer = self.buffer[length:]
        return frame

    def _value_then_header(self) -> Frame | None:
        """The body, when a JSON value at the start is followed by blanks and a header."""
        try:
            text = self.buffer.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            text = self.buffer[: exc.start].decode("utf-8", "surrogatepass")
        try:
            value, end = json.JSONDecoder().raw_decode(text)
        except (ValueError, RecursionError):
            return None
        at = len(text[:end].encode("utf-8", "surrogatepass"))
        while True:
            rest = self.buffer[at:].lstrip()
            if rest.startswith(_HEADER):
                self.buffer = rest
                return Frame(
                    error="Content-Length is longer than the message", request_id=_id_of(value)
                )
            if not _HEADER.startswith(rest) or not self._fill():  # not a header, or no more
                return None

    def _early_end(self) -> Frame | None:
        """The body, when a complete JSON value is followed by the next message's header."""
        at = self.buffer.find(_HEADER)
        if at == -1:
            return None
        try:
            value, end = json.JSONDecoder().raw_decode(self.buffer[:at].decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        if self.buffer[:at].decode("utf-8")[end:].strip():
            return None
        self.buffer = self.buffer[at:]
        return Frame(error="Content-Length is longer than the message", request_id=_id_of(value))


def _decoded(body: bytes, problem: str) -> Frame:
    try:
        message = json.loads(body.decode("utf-8", "surrogatepass"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return Frame(error=problem or f"the body is not JSON: {exc}")
    if problem:
        return Frame(error=problem, request_id=_id_of(message))
    return Frame(message=message)


def _id_of(value: Any) -> Any:
    return value.get("id") if isinstance(value, dict) else None


def encode(message: Any) -> bytes:
    """A message framed for the wire (ASCII JSON: a lone surrogate goes out escaped)."""
    body = json.dumps(message, separators=(",", ":")).encode("ascii")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
