"""Parsing in worker processes gives exactly what parsing in-process gives."""

from __future__ import annotations

from pathlib import Path

import pytest

import kb.loader as loader
from kb.workers import map_forked, worker_count


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


def test_a_check_with_parsing_in_workers_finds_what_one_process_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """References and record-local findings computed in the workers reach the cache intact."""
    import shutil

    from kb.api import validate
    from tests.conftest import SHIPPED_RECORDS

    shutil.copytree(SHIPPED_RECORDS, tmp_path / "records")
    broken = tmp_path / "records" / "hardware" / "nvidia-h100-sxm.yaml"
    broken.write_text(
        broken.read_text()
        .replace("basis: vendor-spec", "basis: nope", 1)
        .replace("source: sources/", "source: sources/gone-", 1)
    )
    monkeypatch.setattr(loader, "PARALLEL_MIN_FILES", 5)
    runs = {}
    for jobs in ("2", "1"):
        monkeypatch.setenv("KB_JOBS", jobs)
        monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / f"cache-{jobs}"))
        runs[jobs] = validate(tmp_path / "records", remember=False).findings
    assert runs["2"] == runs["1"]
    assert {"RF001", "SC001"} <= {f.code for f in runs["1"]}


@pytest.mark.parametrize(
    ("cpus", "load", "expected"),
    [(2, 0.0, 2), (2, 0.4, 2), (2, 0.9, 1), (2, 12.0, 1), (8, 3.2, 5), (16, 0.0, 8), (1, 0.0, 1)],
)
def test_without_kb_jobs_only_free_cpus_get_workers(
    cpus: int, load: float, expected: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kb.workers as workers

    monkeypatch.delenv("KB_JOBS", raising=False)
    monkeypatch.setattr(workers, "usable_cpus", lambda: cpus)
    monkeypatch.setattr(workers, "_load", lambda: load)
    assert worker_count() == expected
    monkeypatch.setenv("KB_JOBS", "3")
    assert worker_count() == 3  # asked for: the load is not consulted
