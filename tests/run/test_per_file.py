"""One function does a file's whole work, and the record cache keeps it as one entry (issue 34).

`kb.checker.check_file` gives a record's schema verdict, references and record-local
findings in one call, in the worker that parsed the file; the per-file stage writes
each file's whole result to the record cache once (`RecordCache.put_file`), the
schema stage gathers the per-file verdicts and reads no cache, and an entry of
another layout, or one that holds only a parse, is never taken for a whole result.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kb import checker, loader, schema
from kb.checker import build_knowledge_base, check_file, open_cache, schema_stage
from kb.loader import display_path, load_knowledge_base
from kb.recordcache import LAYOUT, FileResult, RecordCache
from kb.rules._base import finding_of
from tests.conftest import source_yaml, write_tree

BAD = source_yaml("sources/bad").replace("documentation", "poem")  # SC001: not in the enum
FILES = {
    "sources/ok.yaml": source_yaml("sources/ok"),
    "sources/bad.yaml": BAD,
    "sources/ref.yaml": source_yaml("sources/ref") + "superseded_by: sources/ok\n",
    "sources/broken.yaml": "kind: [source\n",  # does not parse: a load finding, no record
}


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    return write_tree(tmp_path / "records", FILES)


def _spy(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count RecordCache.put_file calls by display path."""
    written: Counter[str] = Counter()
    real = RecordCache.put_file

    def put_file(self: RecordCache, key: str, result: FileResult) -> None:
        written[key.split("\0")[0]] += 1
        real(self, key, result)

    monkeypatch.setattr(RecordCache, "put_file", put_file)
    return written


def test_one_call_gives_a_records_schema_verdict_references_and_local_findings(
    tree: Path,
) -> None:
    kb = load_knowledge_base(tree)[0]
    bad, ref = kb.records["sources/bad"], kb.records["sources/ref"]
    checked = check_file(bad)
    assert [f.code for f in checked.schema] == ["SC001"]
    assert checked.schema == [finding_of(p) for p in schema.validate_record(bad)]
    assert check_file(ref).references == [("/superseded_by", "sources/ok", "*")]
    assert check_file(kb.records["sources/ok"]).schema == []


def test_each_file_is_written_once_whole_cold_and_not_at_all_warm(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = _spy(monkeypatch)
    cache = open_cache(tree)
    kb = build_knowledge_base(tree, cache=cache)
    cache.save()
    assert sorted(written.items()) == sorted((display_path(tree / name), 1) for name in FILES)
    again = open_cache(tree)
    for record in kb:
        entry = again.get(again.key_of(record.path, record.digest))
        assert entry is not None and entry.checked, record.path
        assert entry.schema == [
            f for f in kb.run.schema or schema_stage(kb) if f.location.path == record.path
        ]
    written.clear()
    warm = build_knowledge_base(tree, cache=again)
    assert not written  # every part came from the one entry each file has
    assert schema_stage(warm) == schema_stage(kb) and warm.run.local == kb.run.local
    assert warm.references == kb.references


def test_the_schema_stage_gathers_the_per_file_verdicts(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = build_knowledge_base(tree)
    expected = [f for record in kb for f in map(finding_of, schema.validate_record(record))]
    assert [f.code for f in expected] == ["SC001"]

    def refused(*args: Any) -> Any:
        raise AssertionError(f"the schema stage did more than gather: {args}")

    monkeypatch.setattr(schema, "validate_record", refused)
    monkeypatch.setattr(RecordCache, "get", refused)
    assert schema_stage(kb) == expected
    assert kb.run.schema == expected


def test_a_knowledge_base_loaded_for_reading_is_validated_by_the_schema_stage(
    tree: Path,
) -> None:
    kb = load_knowledge_base(tree)[0]
    assert kb.run.file_schema is None
    assert [f.code for f in schema_stage(kb)] == ["SC001"]


def test_the_schema_is_checked_in_the_worker_that_parsed_the_file(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many files parsed in workers: the schema verdicts are found there, not in this process."""
    many = {f"sources/s{i}.yaml": source_yaml(f"sources/s{i}") for i in range(6)}
    write_tree(tree, many)
    monkeypatch.setattr(loader, "PARALLEL_MIN_FILES", 3)
    monkeypatch.setenv("KB_JOBS", "2")
    pids = tmp_path / "pids"
    real = schema.validate_record

    def noted(record: Any) -> Any:
        with pids.open("a") as out:
            out.write(f"{os.getpid()}\n")
        return real(record)

    monkeypatch.setattr(schema, "validate_record", noted)
    kb = build_knowledge_base(tree, cache=open_cache(tree))
    seen = pids.read_text().split()
    assert len(seen) == len(kb) == len(many) + 3
    assert str(os.getpid()) not in seen
    assert [f.code for f in schema_stage(kb)] == ["SC001"]


def test_an_entry_of_another_layout_is_a_miss(tmp_path: Path) -> None:
    cache = RecordCache(tmp_path, "salt")
    key = RecordCache.key("records/sources/a.yaml", "0" * 64)
    cache.put_file(key, FileResult({"kind": "source"}, [], [], [], []))
    cache.save()
    assert RecordCache(tmp_path, "salt").get(key) == FileResult({"kind": "source"}, [], [], [], [])
    old = RecordCache(tmp_path, "salt")
    old.store.put(
        key, ({"kind": "source"}, [], [], [], [])
    )  # the five parts, as layout 1 kept them
    old.store.save(())
    assert RecordCache(tmp_path, "salt").get(key) is None
    renamed = RecordCache(tmp_path, "salt")
    renamed.store.put(key, ("file-result/1", {"kind": "source"}, [], [], [], []))
    renamed.store.save(())
    assert LAYOUT != "file-result/1" and RecordCache(tmp_path, "salt").get(key) is None


def test_an_entry_holding_only_a_parse_is_checked_and_written_whole(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = open_cache(tree)
    kb = build_knowledge_base(tree, cache=cache)
    bad = kb.records["sources/bad"]
    key = cache.key_of(bad.path, bad.digest)
    cache.put_file(key, FileResult(bad.data, []))  # as if a run had kept the parse alone
    cache.save()
    written = _spy(monkeypatch)
    again = open_cache(tree)
    rebuilt = build_knowledge_base(tree, cache=again)
    assert dict(written) == {bad.path: 1}
    assert schema_stage(rebuilt) == schema_stage(kb)
    entry = again.get(key)
    assert entry is not None and entry.checked and [f.code for f in entry.schema or ()] == ["SC001"]


def test_the_per_file_function_is_the_only_one_the_loader_runs(tree: Path) -> None:
    """No stage but the per-file one writes the cache: the write methods of old are gone."""
    assert not any(
        hasattr(RecordCache, old)
        for old in ("put_load", "put_schema", "put_references", "put_local", "schema", "local")
    )
    assert not hasattr(checker, "checked_alone")
