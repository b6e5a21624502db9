"""Parsing in worker processes gives exactly what parsing in-process gives."""

from __future__ import annotations

from pathlib import Path

import pytest

import kb.loader as loader
from kb.workers import free_workers, map_forked, runnable_now, worker_count


def write_tree(root: Path) -> None:
    (root / "sources").mkdir(parents=True)
    for index in range(40):
        text = f"kind: source\nid: sources/s{index}\ntitle: S {index}\nvalues: [1, 2.5, yes]\n"
        (root / "sources" / f"s{index}.yaml").write_text(text, encoding="utf-8")
    (root / "sources" / "broken.yaml").write_text("kind: [\n", encoding="utf-8")
    (root / "sources" / "dup.yaml").write_text("a: 1\na: 2\n", encoding="utf-8")
    (root / "sources" / "bytes.yaml").write_bytes(b"\xff\xfe")


def test_workers_and_in_process_load_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path / "records")
    monkeypatch.setattr(loader, "PARALLEL_MIN_FILES", 5)
    monkeypatch.setenv("KB_JOBS", "2")
    parallel, parallel_findings = loader.load_knowledge_base(tmp_path / "records")
    monkeypatch.setenv("KB_JOBS", "1")
    serial, serial_findings = loader.load_knowledge_base(tmp_path / "records")

    def loaded(kb: loader.KnowledgeBase) -> list[tuple[str, object, str]]:
        return [(r.id, r.data, r.digest) for r in kb]

    assert loaded(parallel) == loaded(serial)
    assert parallel_findings == serial_findings
    assert sorted(f.code for f in serial_findings) == ["LD002", "LD004", "LD005"]


def test_map_forked_declines_small_inputs_and_one_job(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_JOBS", "2")
    assert map_forked(abs, [-1, -2], min_items=10) is None
    assert map_forked(abs, list(range(-30, 0)), min_items=10) == list(range(30, 0, -1))
    monkeypatch.setenv("KB_JOBS", "1")
    assert worker_count() == 1 and map_forked(abs, list(range(-30, 0)), min_items=10) is None


@pytest.mark.parametrize("total", [1, 2, 7, 100, 1_500, 10_000, 100_001])
@pytest.mark.parametrize("jobs", [2, 3, 8])
def test_guided_spans_cover_every_item_once_in_order_and_shrink(total: int, jobs: int) -> None:
    from kb.workers import GUIDED_FLOOR, _guided

    spans = _guided(total, jobs)
    assert [i for start, end in spans for i in range(start, end)] == list(range(total))
    sizes = [end - start for start, end in spans]
    assert sizes == sorted(sizes, reverse=True) and min(sizes) >= 1
    floor = -(-total // (jobs * GUIDED_FLOOR))
    assert sizes[-2:][0] <= max(floor, 1) or len(sizes) < 3  # the last tasks are small
    assert sizes[0] >= sizes[-1] and len(spans) <= jobs * GUIDED_FLOOR + 8 * jobs


def test_map_forked_gives_every_result_in_order_over_guided_spans(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KB_JOBS", "2")
    done: list[int] = []
    items = list(range(-1_000, 0))
    assert map_forked(abs, items, min_items=10, progress=done.append) == [-i for i in items]
    assert sum(done) == 1_000 and len(done) > 4 and done[0] > done[-1]


def test_a_check_with_parsing_in_workers_finds_what_one_process_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped_stores: Path
) -> None:
    """References and record-local findings computed in the workers reach the cache intact.

    On the shipped sample per push (tests/sample.py: every kind of claim and reference),
    the shipped tree with KB_FULL=1; the threshold is lowered so either is parsed in
    workers.
    """
    from kb.api import validate
    from kb.equations.cache import STORE as EQUATION_STORE
    from tests.sample import copy_with_broken_h100
    from tests.warm import seed

    copy_with_broken_h100(tmp_path)
    monkeypatch.setattr(loader, "PARALLEL_MIN_FILES", 5)
    runs = {}
    for jobs in ("2", "1"):
        monkeypatch.setenv("KB_JOBS", jobs)
        cache = tmp_path / f"cache-{jobs}"  # the claims' results seeded, the record cache empty
        monkeypatch.setenv("KB_CACHE_DIR", str(seed(shipped_stores, cache, (EQUATION_STORE,))))
        runs[jobs] = validate(tmp_path / "records", remember=False).findings
    assert runs["2"] == runs["1"]
    assert {"RF001", "SC001"} <= {f.code for f in runs["1"]}


@pytest.mark.parametrize(
    ("usable", "online", "busy", "expected"),
    [
        (2, 2, 0, 2),  # a quiet 2-CPU machine, right after another kb run: both CPUs
        (2, 2, 0.4, 2),
        (2, 2, 1, 1),  # one other task wants a CPU: one process
        (2, 2, 12, 1),
        (8, 8, 3, 5),
        (8, 16, 0, 8),  # `usable`: the affinity mask, at most MAX_WORKERS
        (2, 64, 30, 2),  # a container's 2 CPUs on a big, half-busy host
        (1, 1, 0, 1),
        (4, 4, 9, 1),  # never fewer than one
    ],
)
def test_workers_only_for_free_cpus(usable: int, online: int, busy: float, expected: int) -> None:
    assert free_workers(usable, online, busy) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.52 0.58 0.59 2/467 12345\n", 2),
        ("1.10 1.18 1.30 1/100 18712", 1),
        ("12.0 11.0 10.0 17/900 1", 17),
        ("", None),
        (None, None),
        ("0.5 0.5 0.5", None),
        ("0.5 0.5 0.5 x/100 1", None),
        ("0.5 0.5 0.5 \u0663/100 1", None),  # a non-ASCII digit is no count
    ],
)
def test_the_runnable_count_of_proc_loadavg(text: str | None, expected: int | None) -> None:
    assert runnable_now(text) == expected


def test_the_decision_reads_runnable_tasks_not_the_load_average(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Right after a kb run the one-minute average still says 1.1; the runnable count says
    only this process runs, so both CPUs of a 2-CPU machine get a worker."""
    import kb.workers as workers

    monkeypatch.delenv("KB_JOBS", raising=False)
    monkeypatch.setattr(workers, "usable_cpus", lambda: 2)
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(workers, "_load", lambda: 1.1)
    readings = iter(["1.10 1.1 1.0 1/100 5"] * 3)
    monkeypatch.setattr(workers, "_read_loadavg", lambda: next(readings))
    assert worker_count() == 2
    # Another task runnable in every reading: one process. A blip in one reading: two.
    monkeypatch.setattr(workers, "_read_loadavg", lambda: "1.1 1.1 1.0 2/100 5")
    assert worker_count() == 1
    blip = iter(["0 0 0 3/100 5", "0 0 0 1/100 5", "0 0 0 2/100 5"])
    monkeypatch.setattr(workers, "_read_loadavg", lambda: next(blip))
    assert worker_count() == 2
    # No /proc: the one-minute load average decides.
    monkeypatch.setattr(workers, "_read_loadavg", lambda: None)
    assert worker_count() == 1
    monkeypatch.setattr(workers, "_load", lambda: 0.2)
    assert worker_count() == 2
    monkeypatch.setenv("KB_JOBS", "3")
    assert worker_count() == 3  # asked for: nothing is read


def _span_sum(span: list[int]) -> list[tuple[int, int]]:
    """Each item with the size of the span it came in (a whole-span function)."""
    return [(item, len(span)) for item in span]


def test_whole_spans_hand_each_task_its_items_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_JOBS", "2")
    items = list(range(1_000))
    got = map_forked(_span_sum, items, min_items=10, whole_spans=True)
    assert got is not None and [item for item, _ in got] == items
    assert len({size for _, size in got}) > 1  # guided spans: several tasks, not one call


def test_the_check_beside_each_parse_is_what_it_is_file_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker parses its task's files, then checks each record: each file's result is the
    one `check_file` gives that record alone, with workers and in one process."""
    from kb.checker import check_file

    write_tree(tmp_path / "records")
    monkeypatch.setattr(loader, "PARALLEL_MIN_FILES", 5)
    for jobs in ("2", "1"):
        monkeypatch.setenv("KB_JOBS", jobs)
        loaded = loader.load_files(tmp_path / "records", alongside=check_file)
        records = [item for item in loaded if item.record is not None]
        assert len(records) == 41 and all(item.alongside is not None for item in records)
        for item in loaded:
            alone = None if item.record is None else check_file(item.record)
            assert item.alongside == alone, item.shown
