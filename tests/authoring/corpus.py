"""The author-mistake corpus: apply one mistake to a copy of the shipped records, run `kb`.

A mistake (tests/authoring/mistakes.yaml) either edits a shipped record
(`edit: <record id>`, `replace: <text found exactly once>`, `with: <its
replacement>`) or adds a file (`add: <path under records/>`, `text:`). It is
checked with the real command line, `kb validate --format json <file>`, and what
it found is compared with what the unedited tree gives for that file (the shipped
records carry warnings of their own): the mistake must add exactly one finding.

Per push the tree is a sample of the shipped records (`sample_roots`, copied by
tests/sample.py); `KB_FULL=1` runs the corpus on the whole shipped tree.
"""

from __future__ import annotations

import functools
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kb.cli import cli
from tests.conftest import SHIPPED_RECORDS
from tests.sample import ROOTS

HERE = Path(__file__).resolve().parent
MISTAKES = HERE / "mistakes.yaml"


def mistakes() -> list[dict[str, Any]]:
    data = yaml.safe_load(MISTAKES.read_text(encoding="utf-8"))
    return list(data["mistakes"])


@functools.cache
def _parsed(text: str) -> Any:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def prose_only(mistake: dict[str, Any]) -> bool:
    """True when `mistake` edits a shipped record's `summary` (its prose) and nothing else.

    Parsed before and after the edit, the record differs in `summary` alone (an edit
    that breaks the YAML is not prose)."""
    if "edit" not in mistake:
        return False
    original = (SHIPPED_RECORDS / f"{mistake['edit']}.yaml").read_text(encoding="utf-8")
    before = _parsed(original)
    try:
        after = _parsed(original.replace(mistake["replace"], mistake["with"]))
    except yaml.YAMLError:  # the mistake breaks the file: not prose alone
        return False
    if not isinstance(after, dict) or before.get("summary") == after.get("summary"):
        return False
    return {k: v for k, v in before.items() if k != "summary"} == {
        k: v for k, v in after.items() if k != "summary"
    }


def sample_roots() -> tuple[str, ...]:
    """The roots of the per-push tree (tests/sample.py copies them with every record they cite).

    Why the sample holds what the whole tree holds: `kb validate FILE` reports the
    findings on FILE and the cross-record findings on the files that reference FILE's
    records (kb/commands/validate.py `_caused_by`), and a record's check reads the records
    it references. So what a mistake adds is decided by its record, the records it cites
    and the records that cite it. The roots are tests/sample.py's `ROOTS`, every record a
    mistake edits, and every shipped record that references one, except where each
    mistake on that record edits only its `summary` (prose a referrer never reads: it
    binds fields, `id#field`); the closure adds what they cite. An added file
    (`add:`) cites records of the sample: a missing one would add RF001, failing the
    test, never passing it. tests/authoring/test_sample.py holds these premises.
    """
    from tests.small_tree import shipped_kb

    referrers: dict[str, set[str]] = {}
    for reference in shipped_kb().references:
        referrers.setdefault(reference.target.split("#")[0], set()).add(reference.source_id)
    edits = [m for m in mistakes() if "edit" in m]
    roots = set(ROOTS) | {m["edit"] for m in edits}
    for record_id in {m["edit"] for m in edits}:
        if not all(prose_only(m) for m in edits if m["edit"] == record_id):
            roots |= referrers.get(record_id, set())
    return tuple(sorted(roots))


def validate(root: Path, target: Path) -> list[dict[str, Any]]:
    """The findings of `kb validate --format json TARGET` (every file it reports on)."""
    result = CliRunner().invoke(
        cli, ["validate", "--format", "json", "--root", str(root), str(target)]
    )
    assert result.exit_code in (0, 1), result.output
    findings: list[dict[str, Any]] = json.loads(result.stdout)["findings"]
    return findings


def _key(finding: dict[str, Any]) -> tuple[str, str, str]:
    return finding["path"], finding["code"], finding["message"]


def added_findings(root: Path, mistake: dict[str, Any]) -> tuple[list[dict[str, Any]], str, int]:
    """Apply `mistake` under `root` (a copy of records/), run kb, undo it: the new findings.

    Returns them, the edited text and the offset of the edit in it (where the test
    looks for the mistake's line).
    """
    if "add" in mistake:
        path = root / mistake["add"]
        path.parent.mkdir(parents=True, exist_ok=True)
        text = mistake["text"]
        path.write_text(text, encoding="utf-8")
        try:
            return validate(root, path), text, 0
        finally:
            path.unlink()
    path = root / f"{mistake['edit']}.yaml"
    original = path.read_text(encoding="utf-8")
    before = Counter(_key(f) for f in unedited_findings(root, path))
    assert original.count(mistake["replace"]) == 1, f"{mistake['name']}: replace must match once"
    start = original.index(mistake["replace"])
    text = original.replace(mistake["replace"], mistake["with"])
    path.write_text(text, encoding="utf-8")
    try:
        after = validate(root, path)
    finally:
        path.write_text(original, encoding="utf-8")
    added = []
    for finding in after:
        key = _key(finding)
        if before[key]:
            before[key] -= 1
        else:
            added.append(finding)
    return added, text, start


_UNEDITED: dict[tuple[Path, Path], tuple[list[dict[str, Any]], str]] = {}


def unedited_findings(root: Path, target: Path) -> list[dict[str, Any]]:
    """`validate(root, target)` on the tree as copied, once per file and tree.

    Most of the corpus edits one record (48 of 54 mistakes edit flops/pipeline-bubble), and
    every mistake puts back what it changed (`added_findings`), so the unedited tree's
    findings for that file are the same before each mistake: they are made once and reused
    while the file holds the bytes they were made from (another text: made again)."""
    text = target.read_text(encoding="utf-8")
    known = _UNEDITED.get((root, target))
    if known is None or known[1] != text:
        known = _UNEDITED[(root, target)] = (validate(root, target), text)
    return known[0]


def expected_line(mistake: dict[str, Any], text: str, start: int) -> int:
    """The line the finding must point at: `line:`, else the first line holding `line_of`
    (default: the first line of the replacement) at or after the edit."""
    if "line" in mistake:
        return int(mistake["line"])
    marker = mistake.get("line_of") or mistake["with"].strip("\n").splitlines()[0]
    offset = text.index(marker) if text.count(marker) == 1 else text.index(marker, start)
    return text.count("\n", 0, offset) + 1


def cache_env(directory: Path) -> None:
    os.environ["KB_CACHE_DIR"] = str(directory)
