"""The per-file result cache: a warm run reports exactly what a cold run reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.checker import check
from kb.recordcache import FILE_NAME, RecordCache

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
    return [f"{f.location} {f.code} {f.message}" for f in check(root).findings]


def test_warm_run_reports_what_the_cold_run_reported(tree: Path) -> None:
    cold = shown(tree)
    assert (tree.parent / "cache" / FILE_NAME).is_file()
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
    (tree.parent / "cache" / FILE_NAME).write_bytes(b"\x00garbage")
    assert shown(tree) == cold


def test_entries_under_another_salt_are_not_used(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    first = RecordCache(path, "salt-a")
    key = RecordCache.key("records/x.yaml", "0" * 64)
    first.put_load(key, {"kind": "source"}, [])
    first.save()
    assert RecordCache(path, "salt-a").get(key) is not None
    assert RecordCache(path, "salt-b").get(key) is None
    assert [p.name for p in tmp_path.iterdir()] == [FILE_NAME]  # no temp files left behind


def test_deleted_files_drop_out_of_the_cache(tree: Path) -> None:
    shown(tree)
    (tree / "sources" / "dup.yaml").unlink()
    shown(tree)
    cache = RecordCache(tree.parent / "cache" / FILE_NAME, "")
    saved = RecordCache(cache.path, _saved_salt(cache.path))
    assert saved.old and not any("dup.yaml" in key for key in saved.old)


def _saved_salt(path: Path) -> str:
    import marshal

    with open(path, "rb") as stream:
        return str(marshal.load(stream)[1])


def test_a_cache_saved_in_several_chunks_reads_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kb.recordcache as recordcache

    monkeypatch.setattr(recordcache, "CHUNK", 2)
    path = tmp_path / FILE_NAME
    first = RecordCache(path, "salt")
    keys = [RecordCache.key(f"records/s/{n}.yaml", f"{n:064d}") for n in range(5)]
    for number, key in enumerate(keys):
        first.put_load(key, {"n": number}, [])
    first.save()
    again = RecordCache(path, "salt")
    assert [again.get(key)[0] for key in keys] == [{"n": n} for n in range(5)]  # type: ignore[index]
    path.write_bytes(path.read_bytes()[:-3])  # a truncated file is no cache at all
    assert RecordCache(path, "salt").old == {}
