"""What a change does to the knowledge: `kb diff BASE [HEAD]`.

Both revisions of the records tree are checked in full through kb.api (the
working tree when HEAD is not given), and compared:

- records added, removed and changed (by content);
- figures changed in the changed records: every quantity `{value, unit, ...}` at its
  dotted path, old -> new with unit, basis and source;
- every claim, in any record, whose computed value or state moved, old -> new with
  the claim's unit (a change to a hardware figure moves the claims of every flop
  class that binds it): predictions that left or entered their band, errata that
  stopped holding (an erratum that now recomputes), derivation steps refuted or fixed;
- findings introduced and fixed (by file, code and message).

A revision is read with `git archive` into a temporary folder; kb.api runs there
with the working tree's result cache, so unchanged records cost nothing.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kb import settings
from kb.usage import UsageProblem

Finding = tuple[str, str, str, str]  # (path, code, severity, message)


@dataclass(frozen=True)
class Side:
    """One revision, checked: its records' data and digests, item states, findings."""

    records: dict[str, tuple[str, Mapping[str, Any]]]  # id -> (digest, data)
    items: dict[tuple[str, str, str], dict[str, str]]  # (record, section, id) -> state etc.
    findings: list[tuple[str, str, str, str]]  # (path, code, severity, message)


@dataclass
class Diff:
    """What moved between two sides (the command prints it; --format json dumps it)."""

    base: str
    head: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    moved: list[dict[str, Any]] = field(default_factory=list)
    findings_added: list[dict[str, str]] = field(default_factory=list)
    findings_fixed: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def diff_revisions(root: Path, base: str, head: str | None) -> Diff:
    """Check `root` at BASE and at HEAD (None: the working tree) and compare them."""
    cache = _cache_dir(root)
    old = _side_at(root, base, cache)
    new = _side_at(root, head, cache) if head else _side_here(root)
    return compare(old, new, base, head or "working tree")


def compare(old: Side, new: Side, base: str = "BASE", head: str = "HEAD") -> Diff:
    found = Diff(base, head)
    found.added = sorted(set(new.records) - set(old.records))
    found.removed = sorted(set(old.records) - set(new.records))
    found.changed = sorted(
        r for r in set(old.records) & set(new.records) if old.records[r][0] != new.records[r][0]
    )
    for record_id in found.changed:
        found.figures += _figure_changes(
            record_id, old.records[record_id][1], new.records[record_id][1]
        )
    found.moved = _moved_items(old, new)
    before, after = Counter(old.findings), Counter(new.findings)
    found.findings_added = [_finding(f) for f in sorted((after - before).elements())]
    found.findings_fixed = [_finding(f) for f in sorted((before - after).elements())]
    return found


def _finding(row: tuple[str, str, str, str]) -> dict[str, str]:
    return dict(zip(("path", "code", "severity", "message"), row, strict=True))


def _moved_items(old: Side, new: Side) -> list[dict[str, Any]]:
    moved = []
    for key in sorted(set(old.items) | set(new.items)):
        before, after = old.items.get(key), new.items.get(key)
        if before is not None and after is not None and _same(before, after):
            continue
        record_id, section, item_id = key
        moved.append(
            {
                "record": record_id,
                "section": section,
                "id": item_id,
                "kind": (after or before or {}).get("kind", ""),
                "old": before,
                "new": after,
                "what": _what_moved(before, after),
            }
        )
    return moved


def _same(before: Mapping[str, str], after: Mapping[str, str]) -> bool:
    return all(before.get(k) == after.get(k) for k in ("state", "computed", "claimed", "error"))


def _what_moved(before: Mapping[str, str] | None, after: Mapping[str, str] | None) -> str:
    """A short label: the reviewer's first question is whether the knowledge got worse."""
    if before is None:
        return "added"
    if after is None:
        return "removed"
    was, now = before.get("state"), after.get("state")
    if was == "erratum" and now == "recomputed":
        return "erratum stopped holding"
    if was in ("validated", "holds") and now == "contradicted":
        return "prediction left its band" if was == "validated" else "bound stopped holding"
    if was == "contradicted" and now in ("validated", "holds"):
        return "prediction entered its band" if now == "validated" else "bound holds again"
    if was != now:
        return f"{was} -> {now}"
    return "value moved"


def _figure_changes(record_id: str, old: Any, new: Any) -> list[dict[str, Any]]:
    before, after = dict(_quantities(old)), dict(_quantities(new))
    rows = []
    for path in sorted(set(before) | set(after)):
        if before.get(path) != after.get(path):
            rows.append(
                {
                    "record": record_id,
                    "field": path,
                    "old": before.get(path),
                    "new": after.get(path),
                }
            )
    return rows


def _quantities(data: Any, prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every `{value, unit}` mapping of a record's data, at its dotted path."""
    if isinstance(data, Mapping):
        if "value" in data and "unit" in data and not isinstance(data["value"], Mapping):
            keep = ("value", "unit", "basis", "source")
            yield prefix.rstrip("."), {k: data[k] for k in keep if k in data}
            return
        for key, value in data.items():
            yield from _quantities(value, f"{prefix}{key}.")
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _quantities(value, f"{prefix}{index}.")


def _side_here(root: Path) -> Side:
    with _working_dir(root.resolve().parent):
        return _side(Path(root.resolve().name))


def _side_at(root: Path, rev: str, cache: Path) -> Side:
    """Check the records tree as it was at `rev` (extracted with git archive).

    A revision without the records folder (a root commit, one before the folder
    existed) is an empty tree. A symbolic link that leads out of the tree, or to an
    absolute path, is not followed: it is an LD001 finding at its path.
    """
    top = Path(_git(root, "rev-parse", "--show-toplevel").decode().strip())
    _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    relative = root.resolve().relative_to(top.resolve()).as_posix()
    present = relative == "." or _git(top, "ls-tree", "--name-only", rev, "--", relative).strip()
    archive = _git(top, "archive", "--format=tar", rev, "--", relative) if present else b""
    with tempfile.TemporaryDirectory(prefix="kb-diff-") as folder:
        refused = _extract(archive, Path(folder), relative) if archive else []
        tree = Path(folder) / relative
        tree.mkdir(parents=True, exist_ok=True)  # a revision without records: an empty tree
        with _working_dir(tree.parent), settings.overriding("KB_CACHE_DIR", str(cache)):
            side = _side(Path(tree.name))
    side.findings.extend(refused)
    side.findings.sort()
    return side


def _extract(archive: bytes, folder: Path, relative: str) -> list[Finding]:
    """Extract the archive's safe members; a finding for each link kb does not follow."""
    refused: list[Finding] = []
    prefix = "" if relative == "." else relative + "/"
    shown_root = Path(relative).name if relative != "." else "."
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            try:
                safe = tarfile.data_filter(member, str(folder))
            except tarfile.FilterError:
                safe = None
            if safe is not None:
                tar.extract(safe, folder, filter="fully_trusted")
                continue
            name = member.name.removeprefix(prefix)
            path = (Path(shown_root) / name).as_posix()
            what = f"a symbolic link to {member.linkname!r}" if member.issym() else "a hard link"
            message = f"{what}, which leads outside the records tree: kb diff does not follow it"
            refused.append((path, "LD001", "error", message))
    return refused


def _side(root: Path) -> Side:
    from kb.api import open_kb, validate
    from kb.equations.engine import analyse

    result = validate(root, remember=False)
    kb = open_kb(root)
    records = {r.id: (r.digest, r.data) for r in kb}
    items = {}
    for record_id, checked in analyse(kb).results.items():
        data = records.get(record_id, ("", {}))[1]
        for item in checked.items:
            if item.section in ("claim", "derivation", "figure"):
                row = {k: getattr(item, k) for k in ("state", "computed", "claimed", "kind")}
                row |= {"error": item.error, "band": item.band, "unit": _unit(data, item.id)}
                items[(record_id, item.section, item.id)] = row
    findings = [(f.location.path, f.code, f.severity.value, f.message) for f in result.findings]
    return Side(records, items, findings)


def _unit(data: Mapping[str, Any], claim_id: str) -> str:
    """The unit a claim's value is stated in (its `expect`), or "" when it states none."""
    for claim in data.get("claims") or []:
        if isinstance(claim, Mapping) and claim.get("id") == claim_id:
            expect = claim.get("expect")
            if isinstance(expect, Mapping):
                return str(expect.get("unit", ""))
            return "1" if claim.get("kind") == "effect" else ""
    return ""


def _cache_dir(root: Path) -> Path:
    from kb.store import cache_dir

    return cache_dir(root).resolve()


@contextmanager
def _working_dir(path: Path) -> Iterator[None]:
    """Run the checker from `path`, so findings name `records/...` on both sides."""
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def _git(cwd: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError as exc:
        raise UsageProblem(f"cannot run git: {exc}") from None
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip() or f"git {args[0]} failed"
        raise UsageProblem(f"kb diff: {detail}")
    return done.stdout
