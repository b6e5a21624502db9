"""The loader: identity from the path, safe YAML only, YAML 1.1 surprises, hostile input.

Every rule also has data-driven cases in tests/rules/cases/; this file tests
the loader's own contract and the inputs that are too big or too random to
write down as a case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.api import validate
from kb.loader import (
    MAX_DEPTH,
    display_path,
    identity_from_path,
    load_files,
    load_knowledge_base,
    parse_document,
    record_files,
    record_names,
)
from kb.model import KIND_BY_FOLDER
from kb.overlay import NONE, Overlay
from kb.recordcache import FileResult, RecordCache
from tests.conftest import source_yaml, write_tree

# ---------------------------------------------------------------- identity


def test_id_and_kind_come_from_the_path(tmp_path: Path) -> None:
    files = {"sources/nvidia/sheet.yaml": source_yaml("sources/nvidia/sheet")}
    root = write_tree(tmp_path / "records", files)
    kb, findings = load_knowledge_base(root)
    assert findings == []
    record = kb.get("sources/nvidia/sheet")
    assert record is not None and record.kind == "source" and record.version == 1
    assert identity_from_path(root, root / "misc" / "x.yaml") == ("misc/x", "")


def test_id_must_equal_the_path(in_tmp: Path) -> None:
    root = write_tree(in_tmp / "records", {"sources/doc.yaml": source_yaml("sources/other")})
    assert [(f.code, f.location.line) for f in validate(root, remember=False).findings] == [
        ("ID001", 2)
    ]


def test_kind_must_match_the_folder(in_tmp: Path) -> None:
    text = source_yaml("sources/doc").replace("kind: source", "kind: accelerator")
    root = write_tree(in_tmp / "records", {"sources/doc.yaml": text})
    codes = {(f.code, f.location.line) for f in validate(root, remember=False).findings}
    assert ("ID002", 1) in codes


# ---------------------------------------------------------------- YAML 1.1 and tags


def test_dates_stay_strings() -> None:
    data, findings = parse_document("published: 2024-05-06\nwhen: 2026-11-30 10:00:00\n", "t.yaml")
    assert findings == []
    assert data == {"published": "2024-05-06", "when": "2026-11-30 10:00:00"}


def test_value_1e9_is_reported_at_its_line(in_tmp: Path) -> None:
    text = source_yaml("interconnects/link").replace("kind: source", "kind: interconnect")
    text = text.replace("publisher: Someone\nsource_type: documentation\n", "")
    text += "family: PCIe\ntopology: switched\nbandwidth:\n  per_link:\n    value: 1e9\n"
    text += "    unit: B/s\n    basis: unverified\n"
    root = write_tree(in_tmp / "records", {"interconnects/link.yaml": text})
    findings = validate(root, remember=False).findings
    assert [(f.code, f.location.line) for f in findings] == [("LD009", 12)]
    assert "'1e9'" in findings[0].message and "1.0e+9" in findings[0].hint


@pytest.mark.parametrize(("field", "line"), [("status", 5), ("title", 3)])
def test_no_read_as_false_is_reported(in_tmp: Path, field: str, line: int) -> None:
    text = source_yaml().replace(f"{field}: ", f"{field}: no #", 1)
    root = write_tree(in_tmp / "records", {"sources/doc.yaml": text})
    assert [(f.code, f.location.line) for f in validate(root, remember=False).findings] == [
        ("LD010", line)
    ]


@pytest.mark.parametrize(
    "tagged",
    [
        "!!python/object/apply:os.system ['touch {marker}']",
        "!!python/object/new:os.system ['touch {marker}']",
        "!!python/name:os.system",
        "!custom 'touch {marker}'",
        "!!binary aGVsbG8=",
        "!!set {{a, b}}",
    ],
)
def test_unsafe_tags_are_refused_and_nothing_executes(tmp_path: Path, tagged: str) -> None:
    marker = tmp_path / "executed"
    text = source_yaml() + f"notes: {tagged.format(marker=marker)}\n"
    data, findings = parse_document(text, "t.yaml")
    assert [f.code for f in findings] == ["LD006"]
    assert findings[0].location.line == 10
    assert data is not None and data["notes"] is None
    assert not marker.exists()


def test_byte_order_mark_and_crlf_line_ends(in_tmp: Path) -> None:
    root = in_tmp / "records"
    (root / "sources").mkdir(parents=True)
    (root / "sources" / "doc.yaml").write_bytes(b"\xef\xbb\xbf" + source_yaml().encode())
    crlf = source_yaml("sources/crlf").replace("status: draft", "status: no").replace("\n", "\r\n")
    (root / "sources" / "crlf.yaml").write_bytes(crlf.encode())
    assert [
        (f.location.path, f.code, f.location.line) for f in validate(root, remember=False).findings
    ] == [("records/sources/crlf.yaml", "LD010", 5)]


def test_duplicate_keys_are_refused_with_both_lines() -> None:
    _, findings = parse_document("a: 1\nb: 2\na: 3\n", "t.yaml")
    assert [(f.code, f.location.line) for f in findings] == [("LD005", 3)]
    assert "line 1" in findings[0].message


# ---------------------------------------------------------------- hostile input, in a subprocess

_PROBE = r"""
import json, resource, sys, tracemalloc
from pathlib import Path
from kb.loader import load_knowledge_base
root = Path(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
kb, findings = load_knowledge_base(root)
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({
    "codes": [f.code for f in findings],
    "lines": [f.location.line for f in findings],
    "peak_bytes": peak,
    "rss_growth_kib": after - before,
}))
"""


def alias_bomb(size: int = 1_000_000) -> str:
    """Nine levels of nine aliases, then a list of ~1 MB of aliases to the top level."""
    lines = ["kind: source", "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    head = "\n".join(lines) + "\nbomb: ["
    return head + ", ".join(["*a8"] * ((size - len(head)) // 5)) + "]\n"


def nested_list(depth: int) -> str:
    return "kind: source\nnotes: " + "[" * depth + "]" * depth + "\n"


HOSTILE = {
    "alias_bomb_1mb": (alias_bomb().encode(), "LD008"),
    "nested_10000": (nested_list(10_000).encode(), "LD007"),
    # 200,000 levels crash libyaml's composer unless the loader's pre-scan stops first
    "nested_200000": (nested_list(200_000).encode(), "LD007"),
    "binary": (bytes(range(256)) * 64, "LD002"),
    "nul_bytes": (b"kind: source\x00\x00\n", "LD004"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_yields_a_finding_with_bounded_memory(tmp_path: Path, name: str) -> None:
    content, code = HOSTILE[name]
    path = tmp_path / "records" / "sources" / "hostile.yaml"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(path.parent.parent)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # a crash (libyaml's stack) would show here
    result = json.loads(done.stdout)
    assert result["codes"] == [code]
    assert result["lines"][0] >= 1
    # Generous bounds: the loader's own allocations, and the process's growth.
    assert result["peak_bytes"] < 64 * 1024 * 1024, result
    assert result["rss_growth_kib"] < 256 * 1024, result


def test_depth_limit_is_exact() -> None:
    ok = "notes: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    too_deep = "notes: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n"
    assert parse_document(ok, "t.yaml")[1] == []
    assert [f.code for f in parse_document(too_deep, "t.yaml")[1]] == ["LD007"]


# ---------------------------------------------------------------- random input (Hypothesis)

KEYS = [
    "kind",
    "id",
    "title",
    "version",
    "status",
    "history",
    "waivers",
    "bandwidth",
    "value",
    "unit",
    "basis",
    "source",
    "code",
    "reason",
    "per_link",
    "links",
    "interconnect",
    "<<",
    "a",
    "hardware",
    "evidence_class",
    "engine",
    "provenance",
    "results",
    "pointer",
    "superseded_by",
]
SCALARS = [
    "1e9",
    "no",
    "yes",
    "on",
    "~",
    "null",
    ".inf",
    "-.nan",
    "0x1F",
    "0o17",
    "2026-11-30",
    "2026-11-30 10:00:00",
    "'quoted'",
    '"esc\\x00aped"',
    "1_000",
    "+1",
    "-0",
    "3.35",
    "sources/doc",
    "hardware/x#memory.bandwidth",
    "PV002",
    "source",
    "receipt",
    "native",
    "[]",
    "{}",
    "[1, [2, [3]]]",
    "{value: 1, unit: GB/s}",
    "|",
    ">-",
    "''",
    '""',
    "@",
    "`",
]
TAGS = [
    "",
    "!!python/object/apply:os.system ",
    "!!python/name:os.system ",
    "!custom ",
    "!!binary ",
    "!!set ",
    "!!omap ",
    "!!timestamp ",
    "!!float ",
    "!!str ",
    "!!int ",
    "!<tag:x> ",
    "!e!x ",
    "!!map ",
    "!!seq ",
    "!!bool ",
    "!!null ",
]
ANCHORS = ["", "&a ", "&b "]
ALIASES = ["*a", "*b", "*undefined"]


def yaml_line(indent: int, dash: str, key: str, tag: str, anchor: str, value: str) -> str:
    return f"{' ' * indent}{dash}{key}: {anchor}{tag}{value}"


line = st.builds(
    yaml_line,
    st.integers(0, 6),
    st.sampled_from(["", "- "]),
    st.sampled_from(KEYS),
    st.sampled_from(TAGS),
    st.sampled_from(ANCHORS),
    st.one_of(st.sampled_from(SCALARS), st.sampled_from(ALIASES), st.text(max_size=12)),
)
documents = st.lists(
    st.one_of(line, st.sampled_from(["---", "...", "%YAML 1.1", "# c", ""])), max_size=25
).map("\n".join)


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "records"


def _assert_well_formed(findings: list) -> None:  # type: ignore[type-arg]
    for f in findings:
        assert f.code and len(f.code) == 5
        assert f.location.line >= 1 and f.location.col >= 1
        assert f.message


FUZZ = {"deadline": None, "suppress_health_check": [HealthCheck.function_scoped_fixture]}


@settings(max_examples=150, **FUZZ)
@given(content=st.binary(max_size=400))
def test_random_bytes_never_raise(fuzz_root: Path, content: bytes) -> None:
    path = fuzz_root / "sources" / "fuzz.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    [loaded] = load_files(fuzz_root, [path])
    assert loaded.record is not None or loaded.problems
    _assert_well_formed(validate(fuzz_root, remember=False).findings)


@settings(max_examples=200, **FUZZ)
@given(text=documents, folder=st.sampled_from([*KIND_BY_FOLDER, "x"]))
def test_random_yaml_never_raises(fuzz_root: Path, text: str, folder: str) -> None:
    """The whole pipeline (loader, schema, every rule, positions) on generated YAML."""
    import shutil

    shutil.rmtree(fuzz_root, ignore_errors=True)
    path = fuzz_root / folder / "fuzz.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _assert_well_formed(validate(fuzz_root, remember=False).findings)


def test_record_files_lists_what_rglob_lists_in_the_same_order(tmp_path: Path) -> None:
    """Hidden files, symlinks (broken or to folders), folders named *.yaml, `a-b` beside `a`."""
    root = tmp_path / "records"
    for name in ("a/x.yaml", "a-b/y.yaml", ".hidden.yaml", "a/z.YAML", "a/b/c/deep.yaml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("kind: source\n")
    (root / "dir.yaml").mkdir()
    (root / "link.yaml").symlink_to(root / "a" / "x.yaml")
    (root / "broken.yaml").symlink_to(root / "nowhere")
    (root / "folder-link").symlink_to(root / "a")
    (root / "folder-link.yaml").symlink_to(root / "a")
    expected = sorted(p for p in root.rglob("*.yaml") if p.is_file() or p.is_symlink())
    assert record_files(root) == expected
    assert len(expected) == 7


def test_one_folder_is_listed_as_the_general_route_lists_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """record_files of one folder (names sorted as text) = the general route (a set of Paths).

    And record_names gives each file's display path and its name as text, no Path made.

    Names that sort differently as text and as parts (`a-b`, `a.b`, `a b`, `a0` beside
    `a/`), non-ASCII and non-UTF-8 names, symlinks; the root relative, `.` and absolute.
    Two equal targets take the general route (a set of Paths sorted by their parts).
    """
    root = tmp_path / "records"
    names = ["a/x.yaml", "a-b/y.yaml", "a.b/z.yaml", "a b/w.yaml", "a0/v.yaml", "a/b/c/d.yml"]
    names += ["é/u.yaml", "ab.yaml", "a-.yaml", "A/t.yaml", "_/s.yaml", "~/r.yaml"]
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("kind: source\n")
    bad = os.fsencode(str(root / "a")) + b"/bad\xff.yaml"
    open(bad, "w").close()
    (root / "a-b" / "link.yaml").symlink_to(root / "a" / "x.yaml")
    (root / "folder-link").symlink_to(root / "a")
    monkeypatch.chdir(tmp_path)
    folders = [Path("records"), root, Path("records") / ".." / "records", Path("records/a")]
    for folder in [*folders, Path("records/a/x.yaml")]:
        listed = record_files(folder)
        assert listed == record_files(folder, [folder, folder]), folder
        assert _named(record_names(folder)) == [(display_path(p), p) for p in listed], folder
    assert len(record_files(root)) == len(names) + 2
    monkeypatch.chdir(root)
    here = Path(".")
    assert record_files(here) == record_files(here, [here, here])
    assert _named(record_names(here)) == [(display_path(p), p) for p in record_files(here)]


def _named(names: list[tuple[str, str]]) -> list[tuple[str, Path]]:
    """record_names' (display path, name) rows with each name made the Path it stands for."""
    return [(shown, Path(name)) for shown, name in names]


def test_nesting_depth_counts_levels_of_mappings_and_lists() -> None:
    from kb.loader import nesting_depth

    shared = {"deep": [[{"x": 1}]]}
    assert nesting_depth({"a": 1}) == 1
    assert nesting_depth({"a": [1, {"b": []}], "c": {}}) == 4
    assert nesting_depth({"a": shared, "b": [shared]}) == 6  # the deeper of its two places
    assert nesting_depth("text") == 0


def test_a_self_referencing_alias_is_refused_not_followed_forever() -> None:
    data, findings = parse_document("kind: source\nloop: &x [1, {again: *x}]\n", "x.yaml")
    assert data is None and [f.code for f in findings] == ["LD008"]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("*ab :[{,}-\n\t\u00a0\u2028\x85x")), max_size=30))
def test_the_alias_scan_answers_what_its_regex_answers(text: str) -> None:
    """`_may_alias` (a loop over the '*') decides which documents count aliases as the regex did."""
    from kb.loader import _MAY_ALIAS, _may_alias

    assert _may_alias(text) == bool(_MAY_ALIAS.search(text))


@pytest.mark.parametrize(
    "name",
    [
        "sources/a.yaml",
        "sources/deep/er/b.yaml",
        "a.yaml",
        "sources/.yaml",
        "sources/..yaml",
        "sources/a.b.yaml",
        "sources/x.yml",
        "flops/x.yaml.yaml",
        "nowhere/y.yaml",
        "sources/noext",
    ],
)
def test_identities_of_many_files_are_identity_from_path(tmp_path: Path, name: str) -> None:
    from kb.loader import _Identities

    root = tmp_path / "records"
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("a: 1\n", encoding="utf-8")
    outside = tmp_path / "elsewhere" / "z.yaml"
    outside.parent.mkdir(exist_ok=True)
    outside.write_text("a: 1\n", encoding="utf-8")
    linked = root / "sources" / "link.yaml"
    linked.parent.mkdir(parents=True, exist_ok=True)
    if not linked.exists():
        linked.symlink_to(outside)
    identities = _Identities(root)
    for each in (path, outside, linked):
        assert identities(each) == identity_from_path(root, each), each


# ---------------------------------------------------------------- reading once per parse


def _holding_something() -> RecordCache:
    """An in-memory record cache with one entry (another file's): it may answer, so it is asked."""
    cache = RecordCache(None, "salt")
    cache.put_file(
        RecordCache.key("records/sources/other.yaml", "0" * 64, ""), FileResult(None, [])
    )
    return cache


@pytest.mark.parametrize("cache", [None, RecordCache(None, "salt")], ids=["none", "empty"])
def test_a_file_no_cache_could_answer_for_is_read_once_where_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: RecordCache | None
) -> None:
    """No cache, or one that holds nothing (a cold run): the loader reads each file once."""
    from kb import loader
    from kb.recordcache import content_digest

    root = write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml()})
    path = root / "sources" / "doc.yaml"
    real_read = loader._read_bytes
    reads: list[Path] = []

    def counted(file: Path, shown: str, standing_in: Overlay = NONE) -> tuple[bytes | None, object]:
        reads.append(file)
        return real_read(file, shown, standing_in)

    monkeypatch.setattr(loader, "_read_bytes", counted)
    (item,) = load_files(root, cache=cache)
    assert reads == [path]
    assert item.record is not None and item.record.id == "sources/doc"
    assert item.record.kind == "source" and item.fresh
    assert item.record.digest == content_digest(path.read_bytes())
    assert item.key == RecordCache.key(item.shown, item.record.digest)
    (asked,) = load_files(root, cache=_holding_something())
    assert len(reads) == 3  # a cache that may answer is asked first: read, then parsed
    assert (asked.key, asked.record and asked.record.digest) == (item.key, item.record.digest)


def test_an_empty_store_is_one_without_entries_or_shard_files(tmp_path: Path) -> None:
    from kb.store import ShardedStore

    store = ShardedStore(tmp_path / "cache", "records", "salt")
    assert store.empty() and ShardedStore(None, "records", "salt").empty()
    store.put("a", 1)
    assert not store.empty()
    store.save()
    again = ShardedStore(tmp_path / "cache", "records", "salt")
    assert not again.empty()  # a shard file on disk: it may hold the entry asked for
    assert again.get("a") == 1 and not again.empty()
    other = ShardedStore(tmp_path / "cache", "records", "other salt")
    assert not other.empty()  # not read yet
    assert other.get("a") is None and other.empty()  # read: another salt's shard holds nothing


def test_a_file_changed_after_the_cache_was_asked_is_keyed_by_the_bytes_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parse reads the file again: its digest and cache key are those of what it parsed."""
    from kb import loader
    from kb.recordcache import RecordCache, content_digest

    root = write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml()})
    path = root / "sources" / "doc.yaml"
    first = path.read_bytes()
    later = first.replace(b"title: A document", b"title: Another document")
    real_read = loader._read_bytes
    reads: list[bytes] = []

    def read_then_change(
        file: Path, shown: str, standing_in: Overlay = NONE
    ) -> tuple[bytes | None, object]:
        found = real_read(file, shown, standing_in)
        reads.append(found[0] or b"")
        if len(reads) == 1:  # the cache lookup's read: the file is written right after it
            path.write_bytes(later)
        return found

    monkeypatch.setattr(loader, "_read_bytes", read_then_change)
    (item,) = load_files(root, cache=_holding_something())
    assert reads == [first, later]
    assert item.record is not None and item.record.title == "Another document"
    assert item.record.digest == content_digest(later)
    assert item.key == RecordCache.key(item.shown, content_digest(later))
    assert item.fresh


def test_a_file_gone_before_its_parse_is_unreadable_and_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kb import loader

    root = write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml()})
    real_read = loader._read_bytes
    calls: list[Path] = []

    def read_then_delete(
        file: Path, shown: str, standing_in: Overlay = NONE
    ) -> tuple[bytes | None, object]:
        calls.append(file)
        if len(calls) == 2:
            file.unlink()
        return real_read(file, shown, standing_in)

    monkeypatch.setattr(loader, "_read_bytes", read_then_delete)
    (item,) = load_files(root, cache=_holding_something())
    assert item.record is None and not item.fresh and item.key == ""
    assert [p.code for p in item.problems] == ["LD001"]
