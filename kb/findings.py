"""Findings: the one message type every check produces, as small immutable data.

A pipeline stage (the loader, the schema stage, the equations engine) emits a
`Problem`: a code, where, what, and the facts that are its own (a hint that
names the case, related locations). The checker turns a problem into a
`Finding` with the severity and the default hint of the rule module that owns
the code (kb.rules._base.finding_of), so a rule's SEVERITY and HINT are stated once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum


class Severity(str, Enum):
    """How bad a finding is; `error` fails `kb validate`, the others only inform."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, order=True)
class Location:
    """Where a finding points: a file, a 1-based line and column, and a JSON pointer.

    `line == 0` means "not yet resolved": the checker maps `pointer` to the YAML
    node's position only for the files that have findings. `offset` (0 or more)
    points inside the string at `pointer` (a number in prose): the checker then
    resolves to that character's own line and column.
    """

    path: str
    line: int = 0
    col: int = 0
    pointer: str = ""
    offset: int = -1

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}:{self.col}"
        return self.path


MAX_TEXT = 1000  # characters of a finding's message, and of its hint


@dataclass(frozen=True)
class Finding:
    """One problem: permanent rule code, severity, location, message, and a hint.

    `message` states the problem with the actual and expected values; `hint`
    says what to do. `related` names other locations involved (for example the
    hardware record a failing claim binds to).
    """

    code: str
    severity: Severity
    location: Location
    message: str
    hint: str = ""
    related: tuple[Location, ...] = field(default=())

    def __post_init__(self) -> None:
        # However long the value it quotes, a finding stays short (MAX_TEXT characters).
        for name in ("message", "hint"):
            text = getattr(self, name)
            if len(text) > MAX_TEXT:
                object.__setattr__(self, name, text[: MAX_TEXT - 1] + "\u2026")

    def sort_key(self) -> tuple[str, int, int, str, str]:
        loc = self.location
        return (loc.path, loc.line, loc.col, self.code, self.message)

    def at(self, location: Location) -> Finding:
        """The same finding at another (usually resolved) location."""
        return replace(self, location=location)


def pointer_join(pointer: str, *parts: str | int) -> str:
    """Extend a JSON pointer (RFC 6901) with escaped reference tokens."""
    for part in parts:
        token = str(part).replace("~", "~0").replace("/", "~1")
        pointer = f"{pointer}/{token}"
    return pointer


def pointer_parts(pointer: str) -> list[str]:
    """Split a JSON pointer into its unescaped reference tokens."""
    if not pointer:
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


@dataclass(frozen=True)
class Problem:
    """What a stage found, before the owning rule module gives it a severity.

    `hint` is None for the rule module's HINT; a string (even "") is this
    problem's own hint (a "did you mean ...?" names the case, the module cannot).
    """

    code: str
    location: Location
    message: str
    hint: str | None = None
    related: tuple[Location, ...] = field(default=())

    @classmethod
    def of(cls, finding: Finding) -> Problem:
        """The problem a finding was made from (its hint kept as this problem's own)."""
        return cls(finding.code, finding.location, finding.message, finding.hint, finding.related)
