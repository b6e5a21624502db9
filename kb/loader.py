"""Read records/ into a KnowledgeBase; every unreadable input becomes a finding.

The loader only reads: it emits problems (kb.findings.Problem), which the
checker turns into findings with the owning rule module's severity and hint,
and it never writes the record cache. Limits: file size, nesting depth, and
alias expansion are bounded, so a hostile file costs a finding, not memory or
a crash. Positions are not kept here: the checker resolves a finding's JSON
pointer to line:col only for files that have findings (see kb.positions).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kb import fileread
from kb.findings import Location, Problem
from kb.model import KIND_BY_FOLDER, KnowledgeBase, Record
from kb.overlay import NONE, Overlay
from kb.recordcache import FileResult, RecordCache, content_digest
from kb.workers import map_forked
from kb.yamlsafe import load_record_yaml, max_nesting
from kb.yamlwords import yaml_kind

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_DEPTH = 64
MAX_EXPANDED_NODES = 200_000
# Below this many collection indicators a document cannot nest deeper than libyaml handles.
_SAFE_INDICATORS = 5_000
# Parse in worker processes from this many changed files on (below it, fork costs more).
PARALLEL_MIN_FILES = 1_500
# What the walk lists: records end in .yaml; a .yml file is listed only to be refused (LD012).
RECORD_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Loaded:
    """One file as the load stage leaves it: its record (if it became one) and its problems.

    `key` is its record-cache key ("" when the file could not be read); `fresh`
    says it was parsed in this run (the cache did not know its bytes), so the
    checker stores what it finds about it; `cached`, the cache's entry for a file
    it knew (all of it: the checker reads the parts of the later stages there).
    """

    shown: str
    key: str
    record: Record | None
    problems: tuple[Problem, ...]
    fresh: bool
    unread_id: str = ""  # the id its place names, when it did not become a record
    alongside: Any = None  # what load_files' `alongside` gave for the record, if it ran
    cached: FileResult | None = None


def load_knowledge_base(
    root: Path, paths: Sequence[Path] | None = None, cache: RecordCache | None = None
) -> tuple[KnowledgeBase, list[Problem]]:
    """Every record under `root` (or only `paths`) in a frozen KnowledgeBase, and the problems.

    No references: for commands that only read records (kb.checker builds the
    checked knowledge base). A `cache` is read, never written.
    """
    kb = KnowledgeBase(root=str(root))
    problems: list[Problem] = []
    for item in load_files(root, paths, cache):
        problems.extend(item.problems)
        if item.record is not None:
            kb.add(item.record)
    return kb.freeze(), problems


def load_files(
    root: Path,
    paths: Sequence[Path] | None = None,
    cache: RecordCache | None = None,
    listed: bool = False,
    alongside: Callable[[Record], Any] | None = None,
    digests: Mapping[str, str] | None = None,
    meanwhile: Callable[[], object] | None = None,
    standing_in: Overlay = NONE,
    before: Callable[[], object] | None = None,
) -> list[Loaded]:
    """Read and parse every record file under `root` (or only `paths`), in walk order.

    With a `cache`, files whose bytes are unchanged since the last run are not parsed
    again (the cache only answers here; the checker writes it). Many changed files are
    parsed on all cores (kb.workers). `listed` says `paths` are files as record_files
    lists them (sorted): they are not listed again. `alongside(record)`, a pure function,
    runs on every record parsed in this run in the worker that parsed it, once that
    worker's task has parsed all its files (the checker's per-file stage: one pickling
    of results).
    `digests`: the content hashes of files already known this run, by display path
    (kb.incremental's, from the snapshot for a trusted stat): a file the cache knows
    under its hash is not read again. `meanwhile`: work this process does while workers
    parse, if they do, and `before`: what each worker would do first, done here once
    before they fork (kb.workers.map_forked). `standing_in`: the records standing in
    for files in this run (kb.overlay: `kb validate -`, the language server's buffers).
    """
    identities = _Identities(root)
    chosen = list(paths or ()) if listed else record_files(root, paths, standing_in)
    known = digests or {}
    # A cache that holds nothing answers for no file: each is read once, where it is parsed.
    asked = cache if cache is not None and not cache.empty() else None
    files = [_read_cached(path, asked, known, standing_in, asked is not None) for path in chosen]
    for item in files:
        if item.result is not None and item.result[0] is not None:  # the cache answered
            item.identity = identities(item.path, item.real)
    todo = [item for item in files if item.result is None]
    _parse_all(todo, alongside, identities, cache, meanwhile, standing_in, before)
    loaded = []
    for item in files:
        data, problems = item.result  # type: ignore[misc]
        record = None if data is None else Record(*item.identity, item.shown, data, item.digest)
        # A file kb could not read still names a record of the tree (kb.checker).
        unread = "" if record is not None else _plain_id(root, item.path)
        loaded.append(
            Loaded(
                item.shown,
                item.key,
                record,
                tuple(problems),
                item.fresh,
                unread,
                item.alongside,
                item.cached,
            )
        )
    return loaded


def _plain_id(root: Path, path: Path) -> str:
    """The id a record file's place in the tree gives it ("" outside it), resolving nothing."""
    try:
        name = path.relative_to(root).as_posix()
    except ValueError:
        return ""
    return next((name[: -len(s)] for s in RECORD_SUFFIXES if name.endswith(s)), "")


def record_files(
    root: Path, paths: Sequence[Path] | None = None, standing_in: Overlay = NONE
) -> list[Path]:
    """The .yaml (and misnamed .yml) files under `root`, or under the given paths, sorted.

    A record standing in for a file (`standing_in`, kb.overlay) is one of them.
    """
    targets = list(paths) if paths else [root]
    if len(targets) == 1 and not standing_in.files and targets[0].is_dir():
        return [Path(name) for name in _names_under(str(targets[0]))]  # every run's tree
    found: set[Path] = set()
    for target in targets:
        if target.is_dir():
            found.update(map(Path, _yaml_files(str(target))))
        else:
            found.add(target)
    found.update(standing_in.files_under(targets, found))  # `kb validate -`: stdin is a file here
    return sorted(found, key=lambda path: path.parts)  # Path order, without Path.__lt__


def record_names(root: Path) -> list[tuple[str, str]]:
    """(display path, name) of each file record_files(root) lists, in its order: `Path(name)`.

    For a run's snapshot (kb.incremental), which needs a Path only for the files it
    reads: 10,000 Paths cost ~25 ms of CPU. Under a relative folder that is not `.`
    and holds no `..`, each name is already what `str(Path(name))`, so display_path,
    gives (the walk joins real names to the folder's normalised text).
    """
    if not root.is_dir():
        return [(display_path(path), str(path)) for path in record_files(root)]
    names = _names_under(str(root))
    if root.is_absolute() or ".." in root.parts or str(root) == ".":
        return [(display_path(Path(name)), name) for name in names]
    return [(name if _is_utf8(name) else _escaped(name), name) for name in names]


def _names_under(folder: str) -> list[str]:
    """The names of record_files of one folder, sorted as text (as Paths: ~2x cheaper).

    One walk lists each file once, every name starting with `folder`, so no set is
    needed; and text with each separator made the lowest character (NUL, which no
    name holds) sorts as the parts do: `a/x` before `a-b/y`, as ("a", "x") < ("a-b",
    "y"). tests/checker/test_loader.py holds this to the general route above.
    """
    return sorted(_yaml_files(folder), key=lambda name: name.replace(os.sep, "\0"))


def _yaml_files(folder: str) -> Iterator[str]:
    """The *.yaml and *.yml files below `folder` as Path.rglob finds them, without its stats.

    A .yml file is listed so that the loader refuses it (LD012) instead of skipping it.

    Symlinks count (a broken one must be reported, LD001, not silently skipped);
    symlinked folders are not entered and unreadable ones are skipped, as rglob does.
    Every run lists the whole tree, so this is on the path of an unchanged `kb validate`.
    """
    pending = [folder]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            kind = _entry_kind(entry)
            if kind == "folder":
                pending.append(entry.path)
            elif kind == "file" and entry.name.endswith(RECORD_SUFFIXES):
                yield entry.path


def _entry_kind(entry: os.DirEntry[str]) -> str:
    """What an entry is: "folder" (entered) or "file" (listed: regular, special, symlink).

    A question about one entry that fails (a symlink loop answers ELOOP) concerns that
    entry alone: it is listed, so the loader reports it, and the folder's listing goes on.
    """
    try:
        return "folder" if entry.is_dir(follow_symlinks=False) else "file"
    except OSError:
        return "file"


def display_path(path: Path) -> str:
    r"""A path as findings print it: relative to the working directory when possible.

    A name that is not UTF-8 is shown with its bad bytes escaped (`bad\xff.yaml`), so
    every report, cache key and snapshot stays printable (the loader refuses the file).
    """
    if not path.is_absolute() and ".." not in path.parts:
        shown = str(path)  # what relpath would return, without its two abspath calls
    else:
        try:
            shown = os.path.relpath(path)
        except ValueError:
            shown = str(path)
    return shown if _is_utf8(shown) else _escaped(shown)


def _is_utf8(name: str) -> bool:
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes of the name, kept as surrogates
        return False
    return True


def _escaped(name: str) -> str:
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass
class _File:
    """One file on its way into the knowledge base: read, then parsed or found in the cache."""

    path: Path
    shown: str
    digest: str = ""
    key: str = ""
    result: tuple[dict[str, Any] | None, list[Problem]] | None = None
    identity: tuple[str, str] = ("", "")
    fresh: bool = False  # parsed in this run
    alongside: Any = None
    real: str | None = None  # where the file resolves if it is a symlink, "" if not
    cached: FileResult | None = None  # the cache's entry, when it answered


def _read_cached(
    path: Path,
    cache: RecordCache | None,
    known: Mapping[str, str],
    standing_in: Overlay = NONE,
    read: bool = True,
) -> _File:
    """Read a file; when the cache knows its bytes, its parse result too.

    A file whose hash is `known` and in the cache is not read: the cache answers.
    The bytes of a file the cache does not know are not kept: its parse reads it
    again (`_parse_all`), so the bytes of every file are never held all at once
    (at 100,000 files ~240 MB, beside the documents parsed from them). `read=False`
    (no cache could answer): the file is not read here at all, only where it is
    parsed (a cold run's ~0.15 s of reading and hashing at 10,000 files, before the
    parse workers could start, is not done twice).
    """
    item = _File(path, display_path(path))
    name = path.name
    if not _is_utf8(str(path)):  # the name, or a folder's: it cannot become a record id
        message = "the file name is not UTF-8 (its bytes are shown escaped); the file is not read"
        hint = "rename the file: a record id is lowercase ASCII"
        item.result = (None, [_refused("LD002", item.shown, message, hint)])
        return item
    if name.endswith(".yml"):
        item.result = (None, [_misnamed(item.shown, name)])
        return item
    if cache is not None and known.get(item.shown):
        item.digest, item.real = known[item.shown], _real_path(path)
        item.key = cache.key_of(item.shown, item.digest, item.real)
        entry = cache.get(item.key)
        if entry is not None:
            item.result, item.cached = (entry.data, [Problem.of(f) for f in entry.load]), entry
            return item
    if not read:
        return item
    raw, problem = _read_bytes(path, item.shown, standing_in)
    if problem is not None:
        item.result = (None, [problem])
        return item
    assert raw is not None
    item.digest = content_digest(raw)
    item.real = _real_path(path)
    key = RecordCache.key if cache is None else cache.key_of
    item.key = key(item.shown, item.digest, item.real)
    entry = cache.get(item.key) if cache is not None else None
    if entry is not None:
        item.result, item.cached = (entry.data, [Problem.of(f) for f in entry.load]), entry
    return item


def _real_path(path: Path) -> str:
    """Where `path` resolves if it is a symlink, else "" (RecordCache.key's `real`)."""
    return os.path.realpath(path) if os.path.islink(path) else ""


def _parse_all(
    items: list[_File],
    alongside: Callable[[Record], Any] | None,
    identities: _Identities,
    cache: RecordCache | None,
    meanwhile: Callable[[], object] | None = None,
    standing_in: Overlay = NONE,
    before: Callable[[], object] | None = None,
) -> None:
    """Parse the files the cache did not know, in worker processes when there are many.

    Each is read again where it is parsed (or there only: `_read_cached`), and its
    digest and cache key are those of the bytes read then: what is parsed and what
    the cache keeps it under always agree, even when the file changed since the
    cache was asked. Where it resolves (a symlink) and its id are found there too,
    once it was read.
    """

    def parse(item: _File) -> _Parsed:
        raw, problem = _read_bytes(item.path, item.shown, standing_in)
        real = _real_path(item.path) if item.real is None else item.real
        if problem is not None:
            return "", real, ("", ""), None, [problem], None
        assert raw is not None
        digest = content_digest(raw)
        identity = identities(item.path, real)
        data, problems = _parse_bytes(raw, item.shown)
        return digest, real, identity, data, problems, None

    def checked(item: _File, parsed: _Parsed) -> _Parsed:
        digest, real, identity, data, problems, _ = parsed
        if alongside is None or data is None:
            return parsed
        extra = alongside(Record(*identity, item.shown, data, digest))
        return digest, real, identity, data, problems, extra

    def job(span: Sequence[_File]) -> list[_Parsed]:
        """Parse every file of `span`, then run `alongside` on each record parsed.

        One step for every file, then the next: each step's code and data stay in the
        CPU's caches (the two steps file by file cost ~20% more CPU, BENCHMARKS.md).
        """
        parsed = [parse(item) for item in span]
        return [checked(item, done) for item, done in zip(span, parsed, strict=True)]

    key = RecordCache.key if cache is None else cache.key_of
    results = map_forked(
        job, items, PARALLEL_MIN_FILES, meanwhile=meanwhile, before=before, whole_spans=True
    )
    results = results or job(items)
    for item, (digest, real, identity, data, problems, extra) in zip(items, results, strict=True):
        item.result, item.alongside, item.real, item.identity = (
            (data, problems),
            extra,
            real,
            identity,
        )
        if digest != item.digest:  # not read before, changed since it was, or unreadable now
            item.digest = digest
            item.key = key(item.shown, digest, real) if digest else ""
        item.fresh = bool(digest)


# What a parse job gives back: digest, symlink target, identity, document, problems, alongside.
_Parsed = tuple[str, str, tuple[str, str], dict[str, Any] | None, list[Problem], Any]


def _parse_bytes(raw: bytes, shown: str) -> tuple[dict[str, Any] | None, list[Problem]]:
    text, problem = _decode(raw, shown)
    if problem is not None:
        return None, [problem]
    assert text is not None
    return parse_document(text, shown)


class PathResolver:
    """Path.resolve for many files, resolving each folder once (a symlinked file on its own).

    The loader's identities and kb.reads.scope (which files `kb validate PATH` covers)
    both resolve paths through it.
    """

    def __init__(self) -> None:
        self.folders: dict[Path, Path] = {}

    def __call__(self, path: Path) -> Path:
        # A file that is not a symlink resolves to its resolved folder plus its name.
        return path.resolve() if path.is_symlink() else self.folder_of(path) / path.name

    def folder_of(self, path: Path) -> Path:
        """The resolved folder of `path` (resolved once per folder)."""
        folder = self.folders.get(path.parent)
        if folder is None:
            folder = self.folders[path.parent] = path.parent.resolve()
        return folder


class _Identities:
    """identity_from_path with the root and each folder resolved once, not once per file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.resolved_root = root.resolve()
        self.resolve = PathResolver()
        text = str(self.resolved_root)
        self.prefix = text if text.endswith("/") else text + "/"
        self.folder_texts: dict[str, str] = {}  # a file's folder as written -> resolved

    def __call__(self, path: Path, real: str | None = None) -> tuple[str, str]:
        """The file's id and kind; `real` as _File.real says, when known."""
        text = self._resolved_text(path, real)
        if text is None:
            text = str(self.resolve(path))
        # The usual file, `<root>/<folder>/<name>.yaml`, told apart with string operations
        # (both paths are resolved: absolute, normalised); _identity's pathlib steps give
        # the same for it and decide everything else.
        if text.startswith(self.prefix) and text.endswith(".yaml"):
            relative = text[len(self.prefix) :]
            if len(relative) - relative.rfind("/") > 6:  # a name longer than ".yaml"
                folder = relative.partition("/")[0] if "/" in relative else ""
                return relative[:-5], KIND_BY_FOLDER.get(folder, "")
        return _identity(self.resolved_root, Path(text), path)

    def _resolved_text(self, path: Path, real: str | None) -> str | None:
        """str(PathResolver()(path)) with string operations for a plain file in a folder.

        None for anything else (a symlink, a file at the top of the file system):
        PathResolver decides those.
        """
        parent, _, name = str(path).rpartition("/")
        if not parent or (os.path.islink(path) if real is None else real):
            return None
        folder = self.folder_texts.get(parent)
        if folder is None:
            folder = self.folder_texts[parent] = str(self.resolve.folder_of(path))
        return None if folder.endswith("/") else f"{folder}/{name}"


def identity_from_path(root: Path, path: Path) -> tuple[str, str]:
    """The id (path under root without .yaml) and the kind its folder implies ('' if none)."""
    return _identity(root.resolve(), path.resolve(), path)


def _identity(resolved_root: Path, resolved: Path, path: Path) -> tuple[str, str]:
    try:
        relative = resolved.relative_to(resolved_root)
    except ValueError:
        relative = Path(path.name)
    record_id = relative.with_suffix("").as_posix()
    folder = relative.parts[0] if len(relative.parts) > 1 else ""
    return record_id, KIND_BY_FOLDER.get(folder, "")


def parse_document(text: str, shown: str) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Parse YAML text under the limits; returns the mapping or None, and findings."""
    if _may_nest_deeply(text):
        depth = _safe_nesting(text)
        if depth > MAX_DEPTH:
            message = f"nesting depth exceeds {MAX_DEPTH}"
            return None, [_load_finding("LD007", shown, 1, 1, message)]
    try:
        data, problems, shallow = load_record_yaml(text, MAX_DEPTH)
    except yaml.MarkedYAMLError as exc:
        if _is_depth_error(exc):
            return None, [_load_finding("LD007", shown, 1, 1, f"nesting depth exceeds {MAX_DEPTH}")]
        from kb.yamladvice import advise  # the author's mistake, in kb's words

        advice = advise(exc, text)
        if advice is not None:
            location = Location(shown, advice.line, advice.col, "")
            return None, [Problem("LD004", location, advice.message, advice.hint)]
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        if line > len(text.splitlines()):  # PyYAML's mark past the end: the last line
            line, col = max(len(text.splitlines()), 1), 1
        return None, [_load_finding("LD004", shown, line, col, _yaml_message(exc))]
    except yaml.reader.ReaderError as exc:  # a character YAML refuses (NUL, other controls)
        line, col, message = _reader_problem(exc, text)
        return None, [_load_finding("LD004", shown, line, col, message)]
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        detail = " ".join(str(exc).split())  # one line, whatever the library wrote
        return None, [_load_finding("LD004", shown, 1, 1, f"not valid YAML: {detail}")]
    findings = [_problem_finding(p.kind, shown, p.line, p.col, p.detail) for p in problems]
    if any(p.kind in _UNREADABLE_PROBLEMS for p in problems):
        return None, findings  # not a JSON document: no later stage can read it
    return _check_shape(data, shown, text, findings, shallow)


def _check_shape(
    data: Any, shown: str, text: str, findings: list[Problem], shallow: bool = False
) -> tuple[dict[str, Any] | None, list[Problem]]:
    """The document as a record, or the LD007/LD008/LD011 problem that stops it.

    `shallow`: the loader's fast pass built it, so it nests at most MAX_DEPTH levels.
    """
    if _may_alias(text):  # only aliases share (and blow up) nodes
        expanded = expanded_size(data, MAX_EXPANDED_NODES)
        if expanded > MAX_EXPANDED_NODES:
            message = f"aliases expand to more than {MAX_EXPANDED_NODES:,} nodes"
            return None, [*findings, _load_finding("LD008", shown, 1, 1, message)]
    # Without aliases a value takes two characters or more: a short text cannot be over.
    elif len(text) > 2 * MAX_EXPANDED_NODES and _values_over(data, MAX_EXPANDED_NODES):
        message = f"the record holds more than {MAX_EXPANDED_NODES:,} values"
        problem = Problem("LD008", Location(shown, 1, 1, ""), message, "split it into records")
        return None, [*findings, problem]
    depth = 0 if shallow else nesting_depth(data)
    if depth > MAX_DEPTH:
        message = f"nesting depth {depth} exceeds {MAX_DEPTH}"
        return None, [*findings, _load_finding("LD007", shown, 1, 1, message)]
    if not isinstance(data, dict):
        actual = "an empty file" if data is None else yaml_kind(data)
        message = f"a record must be a YAML mapping, found {actual}"
        return None, [*findings, _load_finding("LD011", shown, 1, 1, message)]
    return data, findings


def _read_bytes(
    path: Path, shown: str, standing_in: Overlay = NONE
) -> tuple[bytes | None, Problem | None]:
    instead = standing_in.read(path)
    if instead is not None:
        return _within_limit(instead, shown)
    try:
        return fileread.read_limited(path, MAX_FILE_BYTES), None
    except fileread.TooLarge as exc:
        message = f"file is over the {MAX_FILE_BYTES:,}-byte limit (read {exc.size:,} bytes)"
        return None, _load_finding("LD003", shown, 1, 1, message)
    except fileread.NotARegularFile as exc:
        return None, _load_finding("LD001", shown, 1, 1, f"cannot read file: {exc}")
    except OSError as exc:
        return None, _load_finding("LD001", shown, 1, 1, f"cannot read file: {exc.strerror or exc}")


def _within_limit(raw: bytes, shown: str) -> tuple[bytes | None, Problem | None]:
    if len(raw) > MAX_FILE_BYTES:
        message = f"file is {len(raw):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit"
        return None, _load_finding("LD003", shown, 1, 1, message)
    return raw, None


def _decode(raw: bytes, shown: str) -> tuple[str | None, Problem | None]:
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        message = f"byte 0x{raw[exc.start]:02x} at offset {exc.start} is not UTF-8"
        return None, _load_finding("LD002", shown, line, col, message)


def _may_nest_deeply(text: str) -> bool:
    count = sum(text.count(c) for c in "[{-:?")
    return count > _SAFE_INDICATORS


def _safe_nesting(text: str) -> int:
    try:
        return max_nesting(text, limit=MAX_DEPTH)
    except yaml.YAMLError as exc:
        if _is_depth_error(exc):
            return MAX_DEPTH + 1
        return 0  # the real parse reports the syntax error with its position


def _is_depth_error(exc: yaml.YAMLError) -> bool:
    """Libyaml >= 0.2.6 (PyYAML 6.0.4 wheels) refuses deep nesting itself, as a syntax error."""
    return "nesting depth" in str(exc)


def expanded_size(data: Any, budget: int) -> int:
    """Node count with aliases expanded (memoised on shared objects; stops past budget).

    An alias inside its own anchor (`a: &x [*x]`) expands forever: over any budget.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # nodes whose subtree is being counted
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, ready = stack.pop()
        key = id(node)
        if ready:
            open_nodes.discard(key)
            sizes[key] = min(budget + 1, 1 + sum(sizes[id(c)] for c in _children(node)))
            continue
        if key in sizes:
            continue
        if key in open_nodes:  # met again inside its own subtree: a cycle
            return budget + 1
        children = _children(node)
        if not children:
            sizes[key] = 1
            continue
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(data)]


def nesting_depth(data: Any) -> int:
    """Depth of nested mappings and sequences, level by level (a shared node counts where seen).

    Called after expanded_size has bounded what aliases can expand to, so walking the
    expanded tree stays within MAX_EXPANDED_NODES.
    """
    deepest = 0
    level = [data] if isinstance(data, (dict, list)) else []
    while level:
        deepest += 1
        below: list[Any] = []
        for node in level:
            below.extend(_children(node))
        level = below
    return deepest


def _values_over(data: Any, budget: int) -> bool:
    """True when the document holds more than `budget` keys and values (no aliases)."""
    count, stack = 0, [data]
    while stack and count <= budget:
        node = stack.pop()
        if isinstance(node, dict):
            count += 2 * len(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            count += len(node)
            stack.extend(node)
    return count > budget


def _children(node: Any) -> list[Any]:
    values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    return [v for v in values if type(v) in _CONTAINERS or isinstance(v, (dict, list))]


_CONTAINERS = frozenset({dict, list})
# An alias is a token starting with '*': at the start of a line, after white space, or after
# a flow indicator. `2*B*d` in an equation is no alias, so such files skip expanded_size.
_MAY_ALIAS = re.compile(r"(?:^|[\s\[{,:])\*", re.MULTILINE)
_BEFORE_ALIAS = frozenset("[{,:")


def _may_alias(text: str) -> bool:
    """True when `_MAY_ALIAS` matches `text` (a '*' first, after white space or `[{,:`).

    A loop over the few '*' of a text instead of the regex, which has no literal prefix
    and so is tried at every position (0.2 ms for a flop class full of `a*b`).
    str.isspace is the regex's white-space class.
    """
    at = text.find("*")
    while at >= 0:
        if at == 0 or text[at - 1].isspace() or text[at - 1] in _BEFORE_ALIAS:
            return True
        at = text.find("*", at + 1)
    return False


def _reader_problem(exc: yaml.reader.ReaderError, text: str) -> tuple[int, int, str]:
    """Where the refused character is (line, column) and what it is, in kb's words."""
    position = max(0, min(int(exc.position), len(text)))
    before = text[:position]
    line = before.count("\n") + 1
    col = position - (before.rfind("\n") + 1) + 1
    character = exc.character
    code = character if isinstance(character, int) else ord(str(character)[:1] or "\0")
    name = "a NUL byte" if code == 0 else f"the control character U+{code:04X}"
    message = f"not valid YAML: {name} is not allowed in a YAML file; remove it"
    return line, col, message


def _yaml_message(exc: yaml.MarkedYAMLError) -> str:
    parts = [p for p in (exc.context, exc.problem) if p]
    return "not valid YAML: " + ", ".join(parts) if parts else "not valid YAML"


_PROBLEM_CODES = {"duplicate-key": "LD005", "tag": "LD006", "key": "LD013", "number": "LD014"}
_UNREADABLE_PROBLEMS = frozenset({"key", "number"})  # the document is not JSON-like


def _misnamed(shown: str, name: str) -> Problem:
    message = f"record files end in .yaml; {name} is not read as a record"
    return _refused("LD012", shown, message, f"rename it to {name.removesuffix('.yml')}.yaml")


def _refused(code: str, shown: str, message: str, hint: str) -> Problem:
    """A file the loader does not read, for a reason its name gives (and its own hint)."""
    return Problem(code, Location(shown, 1, 1, ""), message, hint)


def _problem_finding(kind: str, shown: str, line: int, col: int, detail: str) -> Problem:
    return _load_finding(_PROBLEM_CODES[kind], shown, line, col, detail)


def _load_finding(code: str, shown: str, line: int, col: int, message: str) -> Problem:
    """A load problem; the rule module of `code` gives its severity and hint (kb.rules)."""
    return Problem(code, Location(shown, line, col, ""), message)
