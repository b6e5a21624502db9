"""What every check reads, declared once, and the one dependency graph that answers it.

Each rule module declares `READS`, what its findings on a record depend on; the
same declaration decides where kb.checker runs it (`kb.checker.PLACES`):

- `record`: that record's file alone (its bytes, its path): the per-file stage,
  whose findings the record cache keeps per file;
- `stage`: that file alone, as the load or the schema stage found it: the rule
  forwards that stage's findings (the rules stage, beside the equations stage);
- `views`: that file alone, through its typed view (kb.kinds), which exists only
  once the schema stage has its verdict (the rules stage, beside the equations);
- `claimants`: the record and every file that holds or claims the same id
  (the id its path gives, or its `id:` field);
- `bound`: the record and the contents of the records it binds, templates or
  `uses:` (a reference written `id#...`, or one the equations engine reads that
  no schema marks: `bound_of`), one step, never what those records name in turn:
  the equations engine reads a bound field and a used equation's text and
  symbols, a prose template the figure or the claim it names;
- `equations`: the record's equations analysis (kb.equations.engine.analysed), which reads
  what `bound` reads (a record's bindings and `uses:`; a model's figures are its
  own); kb.checker runs these rules after the equations stage, the others beside
  it;
- `ledger`: for a kind with a ledger (LEDGER_SCANS), the record, the contents of
  every record its references reach, directly or through others, and every
  record of the kinds it scans that references something the record reaches (the
  ledger finds a placement's receipts by interconnect); for any other kind, as
  `bound` (a flop class's collective claims read the receipt rows they bind);
- `all-ids`: the record and the ids of the tree, no other record's contents:
  whether an id it names exists, and so its kind (a record's kind is its id's
  first folder); its messages may name any id (a dangling reference's "did you
  mean ...?");
- `base`: the record and its own version at `--base` (always a full run);
- `codes`: the record and the codes of the registered rules (a waiver's code must be
  one): run after the waivers stage, so that no waiver hides it;
- `findings`: the record and the findings the other rules made on it, and the
  waivers they used (the waiver rules run last).

Every value but `record`, `equations`, `codes` and `findings` runs in the rules
stage beside the equations stage. `LOCAL_READS` are the values that read the
file alone: a partial run loads nothing else for them.

`DependencyGraph` is built from the references of each file (kb.references,
from the schemas' `x-kb-ref`, plus the equations engine's bindings and `uses:`
in any record) and answers who reaches whom. kb.incremental uses it to know
what a change can affect and what a partial run must load; kb.sitegen.deps uses
it for a page's inputs, as PAGE_READS and PAGE_SCANS declare them per kind; the
site's "used by" lists and `kb show` use its referrers. tests/run/test_reads.py
holds every rule's declaration against what the rule really reads, and
tests/site/test_rebuild.py every page's against what rendering it reads.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal, get_args

from kb.model import KnowledgeBase, Record, Reference
from kb.run import Kept
from kb.snapshot import FileState

Reads = Literal[
    "record",
    "stage",
    "views",
    "claimants",
    "bound",
    "equations",
    "ledger",
    "all-ids",
    "base",
    "codes",
    "findings",
]
READS_VALUES: tuple[str, ...] = get_args(Reads)
LOCAL_READS = frozenset({"record", "stage", "views", "codes"})  # the file alone
# Where kb.checker runs a rule, by its READS: the per-file stage ("alone"), after the
# equations stage ("after"), after the waivers stage ("late"); any other value "beside"
# the equations stage (in the rules stage, in a forked child when that is worth it).
PLACES: Mapping[str, str] = {
    "record": "alone",
    "equations": "after",
    "codes": "late",
    "findings": "late",
}
BOUND = frozenset({"bound", "equations", "ledger"})  # the values that read `bound_of`, at least

# The kinds a ledger is computed for, and the kinds it scans for records that reference
# what the ledger's record reaches (kb.ledger.transfers.receipts_on).
LEDGER_SCANS: Mapping[str, tuple[str, ...]] = {
    "placement": ("receipt",),
    "proposal": ("receipt",),
}


# What a record's page reads, by its record's kind (kb.sitegen.deps keys the page on it).
# Every page reads in full the record, the records that reference it ("used by": the
# fields that do) and those whose values it shows (`DependencyGraph.bound`); of the other
# records it references, the title. PAGE_READS adds the records reached one kind per step
# (a flop class's chart: the accelerators it names, then their interconnects; "*": every
# record reached, a placement's ledger); PAGE_SCANS, every record of a kind (the ledger
# looks receipts up by interconnect and pattern, and the break-even places every
# interconnect's figures: kb.ledger.analysis).
PAGE_READS: Mapping[str, tuple[str, ...]] = {
    "flop_class": ("accelerator", "interconnect"),
    "placement": ("*",),
}
PAGE_SCANS: Mapping[str, tuple[str, ...]] = {"placement": ("interconnect", "receipt")}


def scanned_kinds(kind: str, *, page: bool = False) -> tuple[str, ...]:
    """The kinds a check (or, with `page`, the page) of a `kind` record scans (often none)."""
    return (PAGE_SCANS if page else LEDGER_SCANS).get(kind, ())


def declared_reads() -> frozenset[str]:
    """The READS values the registered rules declare (what a partial run must load for)."""
    from kb.rules import all_rules

    return frozenset(rule_reads(rule) for rule in all_rules())


def rule_reads(rule: object) -> str:
    """A rule module's READS (tests/run/test_reads.py requires every rule to declare one).

    READS alone decides where the rule runs (PLACES): a module that still declares
    STAGE or AFTER_SCHEMA, which did before, is refused rather than run elsewhere.
    """
    for gone in ("STAGE", "AFTER_SCHEMA"):
        if hasattr(rule, gone):
            code = getattr(rule, "CODE", rule)
            raise ValueError(f"{code}: {gone} is gone: READS alone says where a rule runs")
    reads = getattr(rule, "READS", None)
    if reads not in READS_VALUES:
        raise ValueError(f"{getattr(rule, 'CODE', rule)}: READS must be one of {READS_VALUES}")
    return str(reads)


def targets_of(record: Record, references: Iterable[Reference]) -> tuple[str, ...]:
    """The ids `record` names: its references and the engine's bindings and `uses:`.

    The equations engine reads the claims and equations of a record of any kind (a
    file in the wrong folder too), so its bindings count even where the kind's
    schema has no `claims` to mark them.
    """
    return _with_engine_ids(record, {ref.target.partition("#")[0] for ref in references})


def bound_of(record: Record, references: Iterable[Reference]) -> tuple[str, ...]:
    """The ids whose contents `record`'s checks read, one step (READS = "bound").

    A reference written `id#...` (a binding, a prose template) and the engine's
    bindings and `uses:`; not a plain reference (a quantity's `source`), whose
    target only has to exist.
    """
    found = {ref.target.partition("#")[0] for ref in references if "#" in ref.target}
    return _with_engine_ids(record, found)


def _with_engine_ids(record: Record, found: set[str]) -> tuple[str, ...]:
    from kb.equations.bind import referenced_records
    from kb.equations.compose import uses_specs
    from kb.equations.engine import binding_specs

    specs = [spec for _, _, spec in binding_specs(record)]
    specs += [spec for _, spec in uses_specs(record)]
    found.update(i for i in map(referenced_records, specs) if i)
    return tuple(sorted(found))


def file_nodes(kb: KnowledgeBase, only: Collection[str] | None = None) -> dict[str, FileState]:
    """Every file `kb` was loaded from (records, duplicates, files that did not load), by path.

    `only`: of the files that loaded as records, just these (a partial run's focus).
    """
    nodes = {f.location.path: FileState("", "", "", ()) for f in kb.load_findings}
    if only is not None:
        loaded = {record.path for record in (*kb, *kb.duplicates)}
        nodes = {name: node for name, node in nodes.items() if name in only or name not in loaded}
    nodes.update(nodes_of(kb, only))
    return nodes


# The files the validation of this tree saw, by display path (kb.api.open_kb(checked=)):
# checked_nodes hands them out while they are the files the tree was loaded from.
CHECKED_FILES: Kept[Mapping[str, FileState]] = Kept("checked files")
GRAPH: Kept[DependencyGraph] = Kept("dependency graph")  # graph_of a frozen tree, once


def checked_nodes(kb: KnowledgeBase) -> Mapping[str, FileState] | None:
    """The files `kb`'s validation saw (CHECKED_FILES), if they are those it holds.

    The same display paths, each record with its id and the digest it was loaded with
    (kb.snapshot.FileState); else None (no validation handed over, a full run's nodes,
    or the tree changed since). A record replaced in memory keeps its digest: code that
    edits a checked knowledge base's records must give them a new one (or none).
    """
    files = kb.run.kept(CHECKED_FILES)
    if not files:
        return None
    records: dict[str, Record] = {}
    for record in (*kb, *kb.duplicates):
        records.setdefault(record.path, record)  # as file_nodes: the first record of a path
    for path, record in records.items():
        node = files.get(path)
        if node is None or node.record_id != record.id or not record.digest:
            return None
        if node.digest != record.digest:  # a full run's nodes have none
            return None
    paths = {f.location.path for f in kb.load_findings}
    return files if paths | records.keys() == files.keys() else None


def nodes_of(kb: KnowledgeBase, only: Collection[str] | None = None) -> dict[str, FileState]:
    """Every loaded record of `kb` (duplicates too; `only` those files) as a graph node."""
    by_source: dict[str, list[Reference]] = {}
    for ref in kb.references:
        by_source.setdefault(ref.source_id, []).append(ref)
    nodes: dict[str, FileState] = {}
    for record in (*kb, *kb.duplicates):
        if record.path in nodes or (only is not None and record.path not in only):
            continue
        refs: Sequence[Reference] = by_source.get(record.id, ())
        if kb.records.get(record.id) is not record:  # a duplicate: kb.references lacks it
            from kb.references import record_references

            refs = list(record_references(record))
        claimed = record.data.get("id")
        nodes[record.path] = FileState(
            record.id,
            claimed if isinstance(claimed, str) else "",
            record.kind,
            targets_of(record, refs),
            bound_of(record, refs),
        )
    return nodes


class DependencyGraph:
    """Who reaches whom among the files of a tree (display path -> FileState)."""

    def __init__(
        self, files: Mapping[str, FileState], references: Iterable[Reference] = ()
    ) -> None:
        self.files = files
        self._references_to: dict[str, list[Reference]] = {}
        self._references_from: dict[str, list[Reference]] = {}
        for ref in references:
            self._references_to.setdefault(ref.target.partition("#")[0], []).append(ref)
            self._references_from.setdefault(ref.source_id, []).append(ref)

    # Each id -> the files that hold it (path id or `id:`), whose path gives it, that
    # reference it, that bind it: built when first asked for (`affected` reads only the
    # files of the graph before a change).

    def _index(self, keys: Callable[[FileState], Iterable[str]]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for name, node in self.files.items():
            for key in keys(node):
                found.setdefault(key, []).append(name)
        return found

    @functools.cached_property
    def _holders(self) -> dict[str, list[str]]:
        return self._index(lambda node: {node.record_id, node.claimed_id} - {""})

    @functools.cached_property
    def _named(self) -> dict[str, list[str]]:
        return self._index(lambda node: (node.record_id,) if node.record_id else ())

    @functools.cached_property
    def _referrers(self) -> dict[str, list[str]]:
        return self._index(lambda node: node.targets)

    @functools.cached_property
    def _binders(self) -> dict[str, list[str]]:
        return self._index(lambda node: node.bound)

    def patched(self, files: Mapping[str, FileState], names: Iterable[str]) -> DependencyGraph:
        """The graph of `files`, which differ from this graph's in the files `names` only.

        Its indexes are this graph's with just those files moved (a copy; this graph is
        unchanged), so a small edit of a big tree does not index every file again
        (kb.lsp.engine, on each keystroke). `files` must hold the unchanged files in
        this graph's order, then the changed ones: the indexes then equal a fresh
        build's, list order included (tests/lsp/test_patched_graph.py).
        """
        graph = DependencyGraph(files)
        wanted = set(names)
        names = [name for name in files if name in wanted] + [n for n in wanted if n not in files]
        keys_of: dict[str, Callable[[FileState], Iterable[str]]] = {
            "_holders": lambda node: {node.record_id, node.claimed_id} - {""},
            "_named": lambda node: (node.record_id,) if node.record_id else (),
            "_referrers": lambda node: node.targets,
            "_binders": lambda node: node.bound,
        }
        moved = set(names)
        for attribute, keys in keys_of.items():
            index: dict[str, list[str]] = dict(getattr(self, attribute))
            touched: set[str] = set()
            for name in names:
                for graph_files in (self.files, files):
                    node = graph_files.get(name)
                    if node is not None:
                        touched.update(keys(node))
            for key in touched:
                kept = [n for n in index.get(key, ()) if n not in moved]
                kept += [n for n in names if n in files and key in keys(files[n])]
                if kept:
                    index[key] = kept
                else:
                    index.pop(key, None)
            graph.__dict__[attribute] = index  # the cached_property's value
        return graph

    def references_to(self, record_id: str) -> list[Reference]:
        """The references that name `record_id` ("used by")."""
        return list(self._references_to.get(record_id, ()))

    def referrers(self, record_id: str) -> list[str]:
        """Ids of the records that reference `record_id` directly, sorted, unique."""
        return sorted({self.files[n].record_id for n in self._referrers.get(record_id, ())} - {""})

    def reaches(self, record_id: str) -> set[str]:
        """Every id `record_id`'s references reach, directly or through others (named or not)."""
        return self._forward_ids([record_id]) - {record_id}

    def targets(self, record_id: str) -> set[str]:
        """The ids `record_id` references directly (existing or not)."""
        return {t for name in self._named.get(record_id, ()) for t in self.files[name].targets}

    def bound(self, record_id: str, *, claims: bool = True) -> set[str]:
        """The ids whose values `record_id` shows: its files' declared `bound` (`bound_of`).

        A template of another record's claim (`{id#claim:c}`) shows a value computed
        from that record's bindings, so with `claims` what that record binds counts too.
        """
        found = {t for name in self._named.get(record_id, ()) for t in self.files[name].bound}
        for ref in self._references_from.get(record_id, ()) if claims else ():
            target, _, field = ref.target.partition("#")
            if field.startswith("claim:") and target != record_id:
                found |= self.bound(target, claims=False)
        return found

    def along(self, record_id: str, kinds: Sequence[str]) -> set[str]:
        """Its references to `kinds[0]` records, theirs to `kinds[1]`, ... ("*": all it reaches)."""
        if "*" in kinds:
            return self.reaches(record_id)
        found: set[str] = set()
        step = {record_id}
        for kind in kinds:
            step = {t for i in step for t in self.targets(i) if self.kind_of(t) == kind}
            found |= step
        return found

    def kind_of(self, record_id: str) -> str:
        """The kind of the record `record_id` names ("" when no file gives that id)."""
        names = self._named.get(record_id)
        return self.files[names[0]].kind if names else ""

    def inputs(self, name: str, reads: Iterable[str] = READS_VALUES) -> set[str]:
        """The files whose contents checks declaring `reads` read for file `name` (default: all).

        The LOCAL_READS, "base" and "all-ids" add nothing (a partial run knows the tree's ids
        without loading them: RunContext.outside_ids); "findings" reads all the others
        read; "claimants" the files holding its ids; "bound" and "equations" the records
        it binds; "ledger" those and, for a kind with a ledger, all its references reach
        and the records its ledger scans.
        """
        return self.load_set([name], reads)

    def load_set(self, names: Iterable[str], reads: Iterable[str] = READS_VALUES) -> set[str]:
        """`names` and every file their checks declaring `reads` read (see `inputs`)."""
        reads = set(READS_VALUES) if "findings" in set(reads) else set(reads)
        nodes = {name: self.files[name] for name in names}
        found = set(nodes)
        if "claimants" in reads:
            ids = {i for node in nodes.values() for i in (node.record_id, node.claimed_id)}
            found |= self._holding(ids - {""})
        if reads & BOUND:
            found |= self._naming({t for node in nodes.values() for t in node.bound})
        if "ledger" in reads:
            for node in nodes.values():
                if scanned_kinds(node.kind):
                    found |= self._ledger_inputs(node)
        return found

    def affected(self, changed: Iterable[str], before: DependencyGraph) -> set[str]:
        """The files of this graph whose findings a change of the `changed` files may change.

        `before`: the graph before the change. Exactly the files whose `inputs` held a
        changed file, before or after: a changed file; one holding an id a changed file
        held; one binding such an id or with a ledger reaching it (`dependents`); one
        with a ledger scanning a changed file's kind that named what the ledger reaches.
        """
        changed = set(changed)
        touched: set[str] = set()
        scanned: dict[str, set[str]] = {}  # kind -> the ids changed files of that kind name
        for name in changed:
            for node in (before.files.get(name), self.files.get(name)):
                if node is not None:
                    touched |= {node.record_id, node.claimed_id} - {""}
                    scanned.setdefault(node.kind, set()).update(node.targets)
        found = (changed & self.files.keys()) | self._holding(touched) | self.dependents(touched)
        for kind, targets in scanned.items():
            candidates = self._files_reaching(targets) | self._naming(targets)
            found |= {n for n in candidates if kind in scanned_kinds(self.files[n].kind)}
        return found

    def dependents(self, ids: Iterable[str]) -> set[str]:
        """The files binding one of `ids`, or with a ledger whose references reach one."""
        ids = set(ids)
        found = {n for i in ids for n in self._binders.get(i, ())}
        found |= {n for n in self._files_reaching(ids) if scanned_kinds(self.files[n].kind)}
        return found

    def naming(self, ids: Iterable[str]) -> set[str]:
        """The files that reference any of `ids` directly (whether it exists: "all-ids")."""
        return {n for i in ids for n in self._referrers.get(i, ())}

    def _ledger_inputs(self, node: FileState) -> set[str]:
        reached = self._forward_ids([node.record_id] if node.record_id else [])
        scanned = scanned_kinds(node.kind)
        return self._naming(reached) | {
            n
            for target in reached
            for n in self._referrers.get(target, ())
            if self.files[n].kind in scanned
        }

    def _holding(self, ids: Iterable[str]) -> set[str]:
        return {n for i in ids for n in self._holders.get(i, ())}

    def _naming(self, ids: Iterable[str]) -> set[str]:
        return {n for i in ids for n in self._named.get(i, ())}

    def _forward_ids(self, start: Iterable[str]) -> set[str]:
        seen = set(start)
        pending = list(seen)
        while pending:
            for name in self._named.get(pending.pop(), ()):
                for target in self.files[name].targets:
                    if target not in seen:
                        seen.add(target)
                        pending.append(target)
        return seen

    def _files_reaching(self, ids: Iterable[str]) -> set[str]:
        found: set[str] = set()
        pending = list(ids)
        while pending:
            for name in self._referrers.get(pending.pop(), ()):
                if name not in found:
                    found.add(name)
                    if self.files[name].record_id:
                        pending.append(self.files[name].record_id)
        return found


def graph_of(kb: KnowledgeBase) -> DependencyGraph:
    """The dependency graph of `kb` (kept in its run if frozen): `checked_nodes` or `file_nodes`."""
    if not kb.frozen:
        return DependencyGraph(checked_nodes(kb) or file_nodes(kb), kb.references)
    return kb.run.once(
        GRAPH, lambda: DependencyGraph(checked_nodes(kb) or file_nodes(kb), kb.references)
    )


def checked_paths(files: Mapping[str, FileState]) -> list[str]:
    """The records a run checked ("checked N records"): the first file per id (ID003), sorted."""
    first: dict[str, str] = {}
    for name in sorted(files, key=path_parts):
        if files[name].record_id:
            first.setdefault(files[name].record_id, name)
    return sorted(first.values())


def path_parts(name: str) -> tuple[str, ...]:
    """`Path(name).parts`, without pathlib for a normalised name (a run sorts 10,000 names)."""
    if not name or "//" in name or name.endswith("/") or "." in name.split("/"):
        return Path(name).parts
    parts = name.split("/")
    return ("/", *parts[1:]) if parts[0] == "" else tuple(parts)


def scope(files: Mapping[str, FileState], paths: Sequence[Path]) -> set[str]:
    """Display paths to report on: the files under `paths`, and the files that reference them."""
    from kb.loader import PathResolver

    wanted = [str(p.resolve()) for p in paths]
    resolve = PathResolver()
    chosen = {name for name in files if _under(str(resolve(Path(name))), wanted)}
    ids = {files[name].record_id for name in chosen} - {""}
    return chosen | {name for name, node in files.items() if ids.intersection(node.targets)}


def _under(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def codes_reading(*values: str) -> frozenset[str]:
    """The codes of the registered rules whose READS is one of `values`."""
    from kb.rules import all_rules

    return frozenset(rule.CODE for rule in all_rules() if rule_reads(rule) in values)
