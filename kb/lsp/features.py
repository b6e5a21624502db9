"""What the server answers besides diagnostics: completion, hover, definition, code actions.

Each function takes plain values (a line of text, a column in code points, the
tree's ids, a record's data) and returns plain values; kb.lsp.server turns them into
LSP JSON (UTF-16 columns). A record another file names is read through the
loader's guarded reader (kb.fileread: regular files only, at most the loader's
limit) and parsed as the loader parses it, never from a path that is not under
the records root.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kb.findings import Finding, Severity

_TOKEN = re.compile(r"[A-Za-z0-9._/#-]+$")
_REFERENCE = re.compile(r"[a-z0-9][a-z0-9._-]*(?:/[a-z0-9][a-z0-9._-]*)+(?:#[A-Za-z0-9_.]+)?")
_SUGGESTION = re.compile(r"did you mean '([^']+)'\?")
_QUOTED = re.compile(r"'([^'\s]+)'")
MAX_ITEMS = 200

Loader = Callable[[str], "Mapping[str, Any] | None"]  # record id -> its data, or None


def word_before(line: str, col: int) -> tuple[int, str]:
    """The reference-like word that ends at code-point `col`: its start and its text."""
    match = _TOKEN.search(line[:col])
    return (match.start(), match.group(0)) if match else (col, "")


def completions(ids: list[str], word: str, load: Loader) -> tuple[list[str], bool]:
    """What completes `word`: record ids, or `id#field` paths after a `#` (and if more exist)."""
    from kb.equations.bind import field_paths

    if "#" in word:
        record_id, _, typed = word.partition("#")
        data = load(record_id)
        if data is None:
            return [], False
        names = [f"{record_id}#{p}" for p in field_paths(data) if p.startswith(typed)]
    else:
        names = [name for name in ids if name.startswith(word)]
    return names[:MAX_ITEMS], len(names) > MAX_ITEMS


def reference_at(line: str, col: int) -> tuple[str, int, int] | None:
    """The reference (`id` or `id#field`) under code-point `col`, with its start and end."""
    for match in _REFERENCE.finditer(line):
        if match.start() <= col <= match.end():
            return match.group(0), match.start(), match.end()
    return None


def hover_text(spec: str, load: Loader) -> str | None:
    """What a reference names: a record's title, or a figure's value and provenance."""
    record_id, _, path = spec.partition("#")
    data = load(record_id)
    if data is None:
        return None
    if not path:
        return f"{record_id}: {data.get('title', '')}"
    return _figure_text(spec, _get(data, path))


def _get(data: Any, dotted: str) -> Any:
    node = data
    for part in dotted.split("."):
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _figure_text(spec: str, target: Any) -> str:
    if isinstance(target, Mapping) and "value" in target:
        parts = [f"{target.get('value')} {target.get('unit', '')}".strip()]
        parts += [f"{key}: {target[key]}" for key in ("basis", "source", "note") if key in target]
        return f"{spec} = " + "; ".join(str(p) for p in parts)
    return f"{spec} = {target!r}"


def pointer_of(spec: str) -> str:
    """The JSON pointer of a reference's field part (`a.b` -> `/a/b`), "" for none."""
    _, _, path = spec.partition("#")
    return "".join(f"/{part}" for part in path.split(".")) if path else ""


def record_path(root: Path, record_id: str) -> Path | None:
    """The file of `record_id` under `root`, or None when the id cannot name one."""
    parts = record_id.split("/")
    if any(part in ("", ".", "..") or "\x00" in part for part in parts):
        return None
    return root.joinpath(*parts[:-1], parts[-1] + ".yaml")


def read_record(path: Path) -> tuple[str | None, Mapping[str, Any] | None]:
    """A record file's text and data, read as the loader reads it; (None, None) if it cannot."""
    from kb import fileread
    from kb.loader import MAX_FILE_BYTES

    try:
        text = fileread.read_limited(path, MAX_FILE_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None, None
    return text, parse_text(text, str(path))


def parse_text(text: str, shown: str) -> Mapping[str, Any] | None:
    """A record's data from its text, as the loader parses it (None if it does not parse)."""
    from kb.loader import MAX_FILE_BYTES, parse_document

    if len(text) > MAX_FILE_BYTES:
        return None
    try:
        data, _ = parse_document(text, shown)
    except Exception:  # noqa: BLE001 - a buffer mid-edit: no data, no crash
        return None
    return data if isinstance(data, Mapping) else None


def severity(finding: Finding) -> int:
    """The LSP DiagnosticSeverity of a finding."""
    return {Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 3}.get(finding.severity, 3)


def suggested_fix(finding: Finding, line: str, col: int) -> tuple[int, int, str] | None:
    """The edit a finding's hint describes, when it names a replacement: start, end, text.

    A hint `did you mean 'x'?` on a finding whose message quotes the wrong name first
    (`unknown field 'sumary'`, `'sources/dco' names no record`) replaces that name
    where it stands on the finding's line, at or after its column (the id part of
    `id#field`); no fix when the name is not found there as a whole word.
    """
    suggestion = _SUGGESTION.search(finding.hint or "")
    wrong = _QUOTED.search(finding.message)
    if suggestion is None or wrong is None or wrong.group(1) == suggestion.group(1):
        return None
    pattern = r"(?<![A-Za-z0-9._/-])" + re.escape(wrong.group(1)) + r"(?![A-Za-z0-9_/-])"
    found = re.compile(pattern).search(line, col)
    if found is None:
        return None
    return found.start(), found.end(), suggestion.group(1)
