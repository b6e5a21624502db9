"""The per-file result cache: a warm run reports exactly what a cold run reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.api import validate
from kb.fingerprint import salt as cache_salt
from kb.recordcache import STORE, FileResult, RecordCache
from kb.store import root_salt, shard_file, shard_of

SHARDS = 16
GLOB = f"{STORE}-*.kbstore"


def shard_name(key: str) -> str:
    return shard_file(STORE, shard_of(key, SHARDS), SHARDS)


SOURCE = """\
kind: source
id: sources/doc
title: A document
version: 1
status: draft
history:
  - {version: 1, date: "2026-11-30", change: First encoding.}
publisher: Somebody
source_type: paper
"""
BAD_SCHEMA = SOURCE.replace("source_type: paper", "source_type: pamphlet")
BAD_YAML = "kind: source\nid: [unclosed\n"
DUPLICATE_KEY = SOURCE + "publisher: Somebody else\n"


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "records"
    (root / "sources").mkdir(parents=True)
    files = {
        "doc": SOURCE,
        "bad-schema": BAD_SCHEMA.replace("sources/doc", "sources/bad-schema"),
        "bad-yaml": BAD_YAML,
        "dup": DUPLICATE_KEY.replace("sources/doc", "sources/dup"),
    }
    for name, text in files.items():
        (root / "sources" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return root


def shown(root: Path) -> list[str]:
    return [f"{f.location} {f.code} {f.message}" for f in validate(root, remember=False).findings]


def test_warm_run_reports_what_the_cold_run_reported(tree: Path) -> None:
    cold = shown(tree)
    assert list((tree.parent / "cache").glob(GLOB))
    assert {line.split()[1] for line in cold} >= {"SC001", "LD004", "LD005"}
    assert shown(tree) == cold


def test_a_changed_file_is_parsed_again(tree: Path) -> None:
    assert not any("sources/doc.yaml" in line for line in shown(tree))
    changed = SOURCE.replace("paper", "pamphlet")
    (tree / "sources" / "doc.yaml").write_text(changed, encoding="utf-8")
    after = [line for line in shown(tree) if "sources/doc.yaml" in line]
    assert len(after) == 1 and "SC001" in after[0] and ":9:1 " in after[0]


def test_a_corrupt_cache_is_ignored(tree: Path) -> None:
    cold = shown(tree)
    for shard in (tree.parent / "cache").glob(GLOB):
        shard.write_bytes(b"\x00garbage")
    assert shown(tree) == cold


def test_entries_under_another_salt_are_not_used(tmp_path: Path) -> None:
    first = RecordCache(tmp_path, "salt-a")
    key = RecordCache.key("records/x.yaml", "0" * 64)
    first.put_file(key, FileResult({"kind": "source"}, []))
    first.save()
    assert RecordCache(tmp_path, "salt-a").get(key) is not None
    assert RecordCache(tmp_path, "salt-b").get(key) is None
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".gitignore", shard_name(key)]  # no temp files


def test_deleted_files_drop_out_of_the_cache(tree: Path) -> None:
    shown(tree)
    (tree / "sources" / "dup.yaml").unlink()
    shown(tree)
    cache = tree.parent / "cache"
    saved = RecordCache(cache, root_salt(cache_salt(), tree)).store.keys()  # the root's stores
    assert saved and not any("dup.yaml" in key for key in saved)


def test_a_save_rewrites_only_the_shards_it_changed(tmp_path: Path) -> None:
    first = RecordCache(tmp_path, "salt")
    keys = [RecordCache.key(f"records/s/{n}.yaml", f"{n:064d}") for n in range(200)]
    for number, key in enumerate(keys):
        first.put_file(key, FileResult({"n": number}, []))
    first.save()
    assert len(list(tmp_path.glob("*.kbstore"))) == SHARDS
    stamps = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.kbstore")}
    second = RecordCache(tmp_path, "salt")
    assert [second.get(key).data for key in keys] == [{"n": n} for n in range(200)]  # type: ignore[union-attr]
    second.put_file(keys[7], FileResult({"n": 7}, [], [], [], []))
    second.save(live_keys=set(keys))
    shards = tmp_path.glob("*.kbstore")
    rewritten = {p.name for p in shards if p.stat().st_mtime_ns != stamps[p.name]}
    assert rewritten == {shard_name(keys[7])}
    third = RecordCache(tmp_path, "salt")
    assert len(third.store.keys()) == 200
    assert third.get(keys[7]) == FileResult({"n": 7}, [], [], [], [])
    assert third.get(keys[8]) == FileResult({"n": 8}, [])


def test_a_damaged_shard_loses_its_entries_only(tmp_path: Path) -> None:
    first = RecordCache(tmp_path, "salt")
    keys = [RecordCache.key(f"records/s/{n}.yaml", f"{n:064d}") for n in range(50)]
    for key in keys:
        first.put_file(key, FileResult({}, []))
    first.save()
    damaged = tmp_path / shard_name(keys[0])
    damaged.write_bytes(damaged.read_bytes()[:20])  # cut inside the index: the shard holds none
    survivors = RecordCache(tmp_path, "salt").store.keys()
    assert keys[0] not in survivors
    assert {k for k in keys if shard_name(k) != shard_name(keys[0])} == survivors


def test_each_reference_is_held_once_and_saved_as_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped_copy: Path
) -> None:
    """The cache entries hold the knowledge base's own Reference objects, rows only on disk."""
    from kb.checker import build_knowledge_base, open_cache

    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    tree = shipped_copy
    for run in ("cold", "warm"):  # found by the per-file stage, then read from the cache
        cache = open_cache(tree)
        kb = build_knowledge_base(tree, cache=cache)
        held = {id(ref) for entry in cache.entries.values() for ref in entry.references or ()}
        assert kb.references and {id(ref) for ref in kb.references} == held, run
        rows = [(r.source_id, r.pointer, r.target, r.expected_kind) for r in kb.references]
        cache.save()
        again = open_cache(tree)
        saved = [
            (record.id, *row)
            for record in kb
            for row in again.get(again.key_of(record.path, record.digest)).references or ()  # type: ignore[union-attr]
        ]
        assert saved == rows and all(type(row) is tuple for row in saved), run
