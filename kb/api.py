"""The one way in: `open_kb` for a command that reads records, `validate` for findings.

Every command and test goes through these two, so `kb build`, `kb ledger`, `kb calc`,
`kb show`, `kb list`, `kb diff` and the language server load the tree exactly as
`kb validate` does:

- `open_kb(root)`: every record of the tree (with the reference index unless
  asked not to), through the same loader and record cache as a check; given
  `checked=` the `Result` of validating it, with that run's schema verdict, so
  the typed views (kb.kinds) see the records its schema stage passed (kb build:
  no second schema run);
- `validate(root, paths)`: the findings of the whole tree, reported on `paths`
  (and the records that reference them). It picks the route itself: the run
  snapshot (kb.incremental: only what changed is re-checked) unless `full`,
  `--base` (versions against git), a record standing in for a file
  (`kb validate -`, the language server's open buffers) or `remember=False`
  asks for a run of everything, which is never remembered
  (kb.checker.check_everything). Both routes give the same `Result`
  (tests/run/test_incremental.py holds them equal).

For programs outside kb these two, with kb.equations.evaluate.evaluate and
kb.ledger.analysis.analyze_placement, are the documented contract, with a
stability statement: docs/api.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from kb.findings import Finding
from kb.gcpause import paused_during
from kb.overlay import NONE, Overlay
from kb.reads import CHECKED_FILES, checked_paths, file_nodes, scope
from kb.run import RunStats
from kb.snapshot import FileState

if TYPE_CHECKING:
    from kb.model import KnowledgeBase


@dataclass(frozen=True)
class Result:
    """What `kb validate` reports: located, sorted findings and the files they cover.

    `stats` says how the run went: full, incremental or served from the snapshot,
    and what the equations stage did (kb.run.RunStats). `files`: every file of the
    tree as the run saw it (kb.snapshot.FileState; from the snapshot, its digest too).
    """

    findings: list[Finding]
    checked_paths: list[str]
    stats: RunStats = field(default_factory=RunStats)
    # The schema stage's findings on every file, those records waive included: the one
    # schema verdict, which open_kb(checked=) gives the typed views.
    schema: tuple[Finding, ...] = ()
    files: Mapping[str, FileState] = field(default_factory=dict)


# The codes the schema stage makes (kb.schema.validate_record): a record with one has no view.
SCHEMA_CODES = frozenset({"SC001", "LD009", "LD010"})


@paused_during
def open_kb(
    root: Path | str, *, with_references: bool = True, checked: Result | None = None
) -> KnowledgeBase:
    """Every record under `root`, loaded as a check loads them (the record cache included).

    `checked`, the Result of validating `root`: its schema verdict becomes this
    knowledge base's schema stage (kb.run.schema), so typed views can be read, and
    the files it saw its `CHECKED_FILES` (kb.reads.checked_nodes: the site's page
    keys and dependency graph from them, not from every record again).
    """
    from kb.checker import build_knowledge_base, open_cache  # not imported by an unchanged run

    root = Path(root)  # a str works as in every other Python API taking a path

    if not with_references:
        from kb.loader import load_knowledge_base
        from kb.rules._base import finding_of

        kb, problems = load_knowledge_base(root, cache=open_cache(root))
        kb.load_findings = [finding_of(problem) for problem in problems]
    else:
        kb = build_knowledge_base(root, None, open_cache(root))
    if checked is not None:
        kb.run.schema = list(checked.schema)
        kb.run.keep(CHECKED_FILES, checked.files)
    return kb


@paused_during
def validate(
    root: Path | str,
    paths: Sequence[Path] | Sequence[str] = (),
    *,
    base: str | None = None,
    full: bool = False,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    remember: bool = True,
    standing_in: Overlay = NONE,
) -> Result:
    """Check the records under `root`; report on `paths` (all when empty) and their referrers.

    `remember=False`: check everything and leave the run snapshot alone (the route
    `--base` and a record standing in for a file take). `standing_in`: records that
    stand in for files of the tree in this run (kb.overlay: `kb validate -`).
    """
    root = Path(root)  # a str works as in every other Python API taking a path
    paths = [Path(p) for p in paths]
    files: Mapping[str, FileState]
    if base is not None or standing_in or not remember:
        from kb.checker import check_everything, open_cache

        ran = check_everything(root, base, open_cache(root), standing_in)
        kb, findings, waived_schema = ran.kb, ran.findings, ran.waived_schema
        files = file_nodes(kb)
        stats = replace(kb.run.stats, mode="full", rechecked=len(files), loaded=len(files))
        every = checked_paths(files)
    else:
        from kb.incremental import refresh

        snapshot, stats = refresh(root, full=full)
        files, findings = snapshot.files, snapshot.findings_of(sorted(snapshot.findings))
        waived_schema, every = snapshot.waived_schema(), snapshot.checked
    reported = (f for f in findings if f.code in SCHEMA_CODES)
    schema = tuple(sorted((*reported, *waived_schema), key=Finding.sort_key))
    findings = [f for f in findings if selected(f.code, select, ignore)]
    shown = scope(files, paths) if paths else None
    if shown is not None:
        findings = [f for f in findings if f.location.path in shown]
    checked = sorted(shown) if shown is not None else every
    return Result(sorted(findings, key=Finding.sort_key), checked, stats, schema, files)


def selected(code: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """True when --select/--ignore let `code` through (prefixes, any case)."""
    if select and not any(code.startswith(s.upper()) for s in select):
        return False
    return not any(code.startswith(i.upper()) for i in ignore)
