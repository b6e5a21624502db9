"""What a YAML syntax error means for an author, in kb's words (LD004).

PyYAML says where its scanner or parser stopped ("while scanning for the next
token, found character that cannot start any token"), which is rarely where the
author went wrong, and never how to fix it. `advise` recognises the mistakes
authors make (a tab in the indentation, `key:value` without a space, a quoted
value or a `{...}` left open, `: ` inside a plain value, a line indented out of
step) and returns the position of the mistake itself, a message that says what
it is and a hint that says what to type. Anything else keeps PyYAML's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

_NO_SPACE = re.compile(r"^\s*(?:- )?[A-Za-z_][\w.-]*:(?=[^\s:/])")
_KEY = re.compile(r"^(\s*)(?:- )?[A-Za-z_][\w.-]*:(\s|$)")


@dataclass(frozen=True)
class Advice:
    line: int  # 1-based
    col: int
    message: str
    hint: str


def advise(exc: yaml.MarkedYAMLError, text: str) -> Advice | None:
    """Advice for a syntax error kb recognises, or None (PyYAML's message stands)."""
    lines = text.splitlines()
    mark = exc.problem_mark or exc.context_mark
    if mark is None or not lines:
        return None
    problem = f"{exc.context or ''} {exc.problem or ''}"
    for check in (_tab, _no_space, _open_quote, _open_flow, _colon_in_value, _indent):
        found = check(problem, exc, lines, min(mark.line, len(lines) - 1))
        if found is not None:
            return found
    return None


def _tab(problem: str, exc: yaml.MarkedYAMLError, lines: list[str], at: int) -> Advice | None:
    for number in range(at, max(at - 2, -1), -1):
        indent = re.match(r"^[ \t]*", lines[number]).group(0)  # type: ignore[union-attr]
        if "\t" in indent:
            col = indent.index("\t") + 1
            return Advice(
                number + 1,
                col,
                f"tab character in indentation at {number + 1}:{col}; YAML indents with spaces",
                "replace the tab with spaces (kb's records indent 2 spaces per level)",
            )
    return None


def _no_space(problem: str, exc: yaml.MarkedYAMLError, lines: list[str], at: int) -> Advice | None:
    for number in range(at, max(at - 2, -1), -1):
        match = _NO_SPACE.match(lines[number])
        if match:
            col = match.end()
            key = match.group(0).strip().removeprefix("- ").rstrip(":")
            return Advice(
                number + 1,
                col,
                f"no space after '{key}:' at {number + 1}:{col}: YAML reads 'key:value' as one"
                " string",
                f"write '{key}: value', with a space after the colon",
            )
    return None


def _open_quote(
    problem: str, exc: yaml.MarkedYAMLError, lines: list[str], at: int
) -> Advice | None:
    if "quoted scalar" not in problem and "expected key" not in problem:
        return None
    for number in range(at, -1, -1):
        line = lines[number]
        if _unclosed_quote(line):
            col = line.index('"') + 1
            return Advice(
                number + 1,
                col,
                f"the quoted value opened at {number + 1}:{col} is not closed",
                'close it with " on the same line (write \\" for a quotation mark inside)',
            )
        if number < at - 20:
            break
    return None


def _unclosed_quote(line: str) -> bool:
    body = re.sub(r"\\.", "", line)  # an escaped \" is no quote
    return body.count('"') % 2 == 1 and re.search(r':\s+"', line) is not None


def _open_flow(problem: str, exc: yaml.MarkedYAMLError, lines: list[str], at: int) -> Advice | None:
    if "flow mapping" not in problem and "flow sequence" not in problem:
        return None
    start = exc.context_mark
    if start is None:
        return None
    brace = "{" if "mapping" in problem else "["
    close = "}" if brace == "{" else "]"
    return Advice(
        start.line + 1,
        start.column + 1,
        f"the {brace} opened at {start.line + 1}:{start.column + 1} is not closed"
        f" (expected ',' or {close!r})",
        f"end the {brace}...{close} on the line it opened, or separate its entries with ', '",
    )


def _colon_in_value(
    problem: str, exc: yaml.MarkedYAMLError, lines: list[str], at: int
) -> Advice | None:
    if "mapping values are not allowed" not in problem or exc.problem_mark is None:
        return None
    line, col = exc.problem_mark.line + 1, exc.problem_mark.column + 1
    return Advice(
        line,
        col,
        f"': ' inside an unquoted value at {line}:{col}: YAML reads it as a new key",
        'quote the whole value ("...") or write the colon without a space after it',
    )


def _indent(problem: str, exc: yaml.MarkedYAMLError, lines: list[str], at: int) -> Advice | None:
    if "expected key" not in problem and "expected <block end>" not in problem:
        return None
    here = _KEY.match(lines[at])
    if here is None:
        return None
    width = len(here.group(1))
    siblings = {len(m.group(1)) for line in lines[:at] if (m := _KEY.match(line))}
    if width in siblings:
        return None
    near = min(siblings, key=lambda s: (abs(s - width), s), default=0)
    return Advice(
        at + 1,
        1,
        f"line {at + 1} is indented {width} spaces, out of step with the keys above",
        f"indent it like the keys of its block ({near} spaces)",
    )
