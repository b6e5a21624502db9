"""kb.store: entries come back as they were put, or not at all; never wrong, never an error."""

from __future__ import annotations

import multiprocessing
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.store import ShardedStore, shard_file, shard_of

VALUES: dict[str, Any] = {
    "a": {"nested": [1, 2.5, None, True], "text": "ünïcode"},
    "b": ("tuple", b"bytes", frozenset({1, 2})),
    "c": "x" * 5000,
    "records/s/odd\x00key.yaml": [[], {}, ()],
}


def saved_store(directory: Path, shards: int = 4) -> ShardedStore:
    store = ShardedStore(directory, "t", "salt", shards=shards)
    for key, value in VALUES.items():
        store.put(key, value)
    for number in range(40):
        store.put(f"k{number}", {"n": number, "pad": "y" * number})
    store.save()
    return ShardedStore(directory, "t", "salt", shards=shards)


def expected(key: str) -> Any:
    return VALUES[key] if key in VALUES else {"n": int(key[1:]), "pad": "y" * int(key[1:])}


def test_round_trip(tmp_path: Path) -> None:
    again = saved_store(tmp_path)
    assert {key: again.get(key) for key in VALUES} == VALUES
    assert again.keys() == set(VALUES) | {f"k{n}" for n in range(40)}
    assert again.get("missing") is None
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".gitignore"] + sorted(shard_file("t", n, 4) for n in range(4))
    assert (tmp_path / ".gitignore").read_text().splitlines()[-1] == "*"


def test_another_salt_or_name_reads_as_empty(tmp_path: Path) -> None:
    saved_store(tmp_path)
    assert ShardedStore(tmp_path, "t", "other salt", shards=4).keys() == set()
    assert ShardedStore(tmp_path, "t", "salt", shards=4).get("a") == VALUES["a"]
    (tmp_path / shard_file("u", shard_of("a", 4), 4)).write_bytes(
        (tmp_path / shard_file("t", shard_of("a", 4), 4)).read_bytes()
    )
    assert ShardedStore(tmp_path, "u", "salt", shards=4).get("a") is None  # another store's file


def test_save_keeps_live_and_used_keys_only(tmp_path: Path) -> None:
    store = saved_store(tmp_path)
    assert store.get("a") == VALUES["a"]
    store.put("new", 1)
    store.save(live_keys={"k3"})
    assert ShardedStore(tmp_path, "t", "salt", shards=4).keys() == {"a", "new", "k3"}


def test_save_without_live_keys_keeps_everything(tmp_path: Path) -> None:
    store = saved_store(tmp_path)
    store.put("new", 1)
    store.save()
    assert ShardedStore(tmp_path, "t", "salt", shards=4).keys() == set(VALUES) | {
        f"k{n}" for n in range(40)
    } | {"new"}


def test_a_value_marshal_cannot_keep_is_not_stored(tmp_path: Path) -> None:
    store = ShardedStore(tmp_path, "t", "salt")
    store.put("x", object())
    assert store.get("x") is None


def test_a_read_only_folder_still_answers(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    store = ShardedStore(blocker / "cache", "t", "salt")
    store.put("x", 1)
    store.save()  # cannot be written: nothing kept, no error
    assert store.get("x") == 1


def test_a_shard_that_is_no_regular_file_reads_as_empty(tmp_path: Path) -> None:
    """A FIFO would block a read, /dev/zero would never end: both are simply empty."""
    import os

    os.mkfifo(tmp_path / shard_file("t", 0, 2))
    (tmp_path / shard_file("t", 1, 2)).symlink_to("/dev/zero")
    store = ShardedStore(tmp_path, "t", "salt", shards=2)
    assert store.keys() == set()
    store.put("a", 1)
    store.save()
    assert ShardedStore(tmp_path, "t", "salt", shards=2).get("a") == 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_flipped_bit_or_a_cut_gives_the_entry_or_a_miss(data: Any) -> None:
    """Any single bit flipped, or the file cut anywhere: right values or None, no error."""
    with tempfile.TemporaryDirectory() as name:
        _damage_and_read(Path(name), data)


def _damage_and_read(folder: Path, data: Any) -> None:
    saved_store(folder, shards=1)
    path = folder / shard_file("t", 0, 1)
    raw = bytearray(path.read_bytes())
    if data.draw(st.booleans()):
        offset = data.draw(st.integers(0, len(raw) - 1))
        raw[offset] ^= 1 << data.draw(st.integers(0, 7))
    else:
        del raw[data.draw(st.integers(0, len(raw) - 1)) :]
    path.write_bytes(bytes(raw))
    damaged = ShardedStore(folder, "t", "salt", shards=1)
    keys = damaged.keys()
    assert keys <= set(VALUES) | {f"k{n}" for n in range(40)}
    for key in keys:
        assert damaged.get(key) in (None, expected(key))


def _writer(args: tuple[str, int]) -> int:
    folder, worker = args
    for round_ in range(15):
        store = ShardedStore(Path(folder), "t", "salt", shards=4)
        for key in store.keys():
            assert store.get(key) in (None, expected_concurrent(key))
        for number in range(30):
            key = f"w{worker}-{round_}-{number}"
            store.put(key, expected_concurrent(key))
        store.save()
    return worker


def expected_concurrent(key: str) -> Any:
    return {"key": key, "body": key * 20}


def test_concurrent_writers_leave_a_readable_store(tmp_path: Path) -> None:
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs fork to start the writers cheaply")  # pragma: no cover
    with multiprocessing.get_context("fork").Pool(4) as pool:
        assert sorted(pool.map(_writer, [(str(tmp_path), n) for n in range(4)])) == [0, 1, 2, 3]
    store = ShardedStore(tmp_path, "t", "salt", shards=4)
    keys = store.keys()
    assert keys, "every shard file lost its index"
    assert all(store.get(key) == expected_concurrent(key) for key in keys)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")] == []
    print(f"concurrent writers: {len(keys)} of {4 * 15 * 30} entries kept, all intact")


PACKAGE = Path(__file__).resolve().parents[2] / "kb"


def test_one_store_and_one_fingerprint() -> None:
    """Only kb.store writes marshal and only kb.fingerprint reads library versions."""
    found: dict[str, list[str]] = {"marshal": [], "importlib.metadata": []}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for word, modules in found.items():
            if (
                f"import {word}" in text
                or f"from {word} import" in text
                or (word == "importlib.metadata" and "from importlib import metadata" in text)
            ):
                modules.append(path.relative_to(PACKAGE).as_posix())
    assert found == {"marshal": ["store.py"], "importlib.metadata": ["fingerprint.py"]}
    assert "kb.recordcache" not in "".join(
        p.read_text(encoding="utf-8") for p in (PACKAGE / "equations").glob("*.py")
    )


ENCODE = """
import sys
from kb.store import ShardedStore
store = ShardedStore(None, "t", "salt", shards=1)
for key in ("b", "a", "c"):
    store.put(key, {"key": key, "list": [key, 1.5, None, (key, True)], "text": key * 300})
sys.stdout.write(store.encode(0).hex())
"""


def test_equal_entries_give_equal_bytes_in_every_process() -> None:
    """The site's manifest is a store file, and two builds must be byte-identical."""
    import subprocess
    import sys

    runs = [
        subprocess.run(
            [sys.executable, "-c", ENCODE], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    ]
    local = ShardedStore(None, "t", "salt", shards=1)
    for key in ("b", "a", "c"):
        local.put(key, {"key": key, "list": [key, 1.5, None, (key, True)], "text": key * 300})
    assert runs[0] == runs[1] == local.encode(0).hex()


def test_entries_put_later_are_made_when_their_shard_is_written(tmp_path: Path) -> None:
    """put_later: each value is made (and marshalled) as its own shard is encoded."""
    store = ShardedStore(tmp_path, "t", "salt", shards=4)
    made: list[str] = []

    def value_of(key: str) -> Any:
        made.append(key)
        return expected(key)

    keys = [f"k{n}" for n in range(40)]
    store.put_later(keys, value_of)
    assert store.get("k7") == expected("k7")  # asked before the save: made then, a copy
    made.clear()
    shards_seen: list[set[int]] = []
    real_encode = store.encode_parts

    def encode_parts(shard: int, live: set[str] | None = None) -> list[bytes | memoryview]:
        before = len(made)
        data = real_encode(shard, live)
        shards_seen.append({shard_of(key, 4) for key in made[before:]})
        return data

    store.encode_parts = encode_parts  # type: ignore[method-assign]
    store.save()
    assert len(shards_seen) == 4  # the save encoded every shard, one by one
    assert sorted(made) == sorted(keys)
    assert all(len(seen) <= 1 for seen in shards_seen)  # only the shard being written
    again = ShardedStore(tmp_path, "t", "salt", shards=4)
    assert {key: again.get(key) for key in keys} == {key: expected(key) for key in keys}
    store.put("k3", "plain")  # a later put wins over put_later
    assert store.get("k3") == "plain"
    store.put_later(["bad"], lambda key: object())  # marshal cannot keep it: not stored
    store.save()
    assert ShardedStore(tmp_path, "t", "salt", shards=4).get("bad") is None
    assert ShardedStore(tmp_path, "t", "salt", shards=4).get("k3") == "plain"
