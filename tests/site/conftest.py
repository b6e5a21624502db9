"""Site test fixtures: a copy of the repository's records, schemas and docs to build from.

The browser tests build the shipped records plus one hostile probe record (its
title is a script tag). If the shipped seed flop class does not carry equations
yet, the seed's own maths from `fixtures/seed_equations.yaml` is merged in, so
the B* MathML and chart are always exercised.

The copy (`repo_copy`) and its site (`built_site`: what `kb build` writes, the planner's
pages included) are made once per run and shared by the xdist workers (`made_once`); the
tests only read them. A test that edits records takes its own copy with the shared
copy's store of results (`warm_copy`).

The browser tests that crawl `built_site` read the record of one crawl of its sample of
pages at both widths (`site_crawl`, also named `phone_crawl` and `desktop_crawl`:
tests/site/crawl_fixtures.py). The chart tests read one load of `repo_copy` (`repo_kb`)
and one pass over its charts (`shipped_charts`), made once a worker.

Every module with a test that reads `repo_copy` (`built_site`, the crawl, the explorer's
site, the charts: fixtures that need it) is one xdist group, `built-site` (`SITE_GROUP`):
the worker that runs it makes the copy, the site and the crawl in turn, and no other
worker waits on the lock of `made_once` meanwhile (issue 34: in CI a second reader's
worker sat ~60 s in it). xdist hands out the groups with the most tests first, so this
one (~240 tests) starts within the run's first seconds and ends long before its tail.
Its browser tests run first, then its others (`browser_tests_first`), so the group launches
chromium once, not once per run of browser modules between the others.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
import pytest
import yaml

from tests.site.chromium import close_shared

if TYPE_CHECKING:
    from kb.model import KnowledgeBase, Record

# --- the crawl of the site (w15-crawl): its fixtures live in crawl_fixtures.py ---
from tests.site.crawl_fixtures import desktop_crawl, phone_crawl, site_crawl  # noqa: F401

# --- end of the crawl's block ---

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEED_FLOP = "flops/sched-tensor-parallel-crossover"
XSS_TITLE = "<script>alert(1)</script>"


def copy_repo(target: Path) -> Path:
    """Copy records/ into `target`; return it."""
    for folder in ("records",):
        shutil.copytree(REPO / folder, target / folder)
    seed = target / "records" / f"{SEED_FLOP}.yaml"
    data = yaml.safe_load(seed.read_text(encoding="utf-8"))
    if not data.get("equations"):
        overlay = yaml.safe_load((FIXTURES / "seed_equations.yaml").read_text(encoding="utf-8"))
        seed.write_text(yaml.safe_dump({**data, **overlay}, sort_keys=False), encoding="utf-8")
    return target


def add_probe(records: Path) -> None:
    """A flop class whose title, summary and text try to inject markup."""
    probe: dict[str, Any] = {
        "kind": "flop_class",
        "id": "flops/xss-probe",
        "title": XSS_TITLE,
        "version": 1,
        "status": "draft",
        "summary": '<img src=x onerror=alert(2)> & "quotes"',
        "history": [{"version": 1, "date": "2026-11-30", "change": "<b>probe</b>"}],
        "text": "</script><script>alert(3)</script>",
    }
    (records / "flops" / "xss-probe.yaml").write_text(yaml.safe_dump(probe), encoding="utf-8")


HERE = Path(__file__).resolve().parent
SITE_GROUP = "built-site"
SHARED = "repo_copy"  # what `built_site`, the crawl, the explorer's site and the charts need


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks (as tests/conftest.py)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = [item for item in items if item.path.parent == HERE]
    readers = {item.path for item in here if SHARED in getattr(item, "fixturenames", ())}
    group = [item for item in here if item.path in readers]
    for item in group:
        item.add_marker(pytest.mark.xdist_group(SITE_GROUP))
    browser_tests_first(items, group)


def drives_a_browser(item: pytest.Item) -> bool:
    """Whether `item` is a browser test (marked, or asking for a module's `browser`)."""
    return item.get_closest_marker("browser") is not None or "browser" in getattr(
        item, "fixturenames", ()
    )


def browser_tests_first(items: list[pytest.Item], group: list[pytest.Item]) -> None:
    """The group's browser tests, then its other tests (each in collection order), where its
    first test was; every other test keeps its place.

    The shared browser is closed whenever the next test is not a browser test
    (`pytest_runtest_teardown`), so in module order the group launched chromium and its
    Playwright driver eight times (~1.5 CPU-s each); browser tests first, once or twice.
    """
    if not group:
        return
    members = {id(item) for item in group}
    at = next(i for i, item in enumerate(items) if id(item) in members)
    ordered = sorted(group, key=lambda item: not drives_a_browser(item))  # stable
    rest = [item for item in items if id(item) not in members]
    items[:] = [*rest[:at], *ordered, *rest[at:]]


class _CompiledTemplates(jinja2.BytecodeCache):
    """Jinja's compiled code of each template, kept for this process.

    Jinja keys a template by its name and file and keeps the checksum of the source it was
    compiled from: a changed template (another theme folder, an edited file) is compiled
    again, an unchanged one is not (~0.18 CPU-s of every build compiles the theme).
    """

    def __init__(self) -> None:
        self.kept: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self.kept.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)  # dropped by Jinja if the checksum differs

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.kept[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()


@pytest.fixture
def compiled_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test's in-process builds compile each template once per process, not once a build.

    Only the environment kb.sitegen.build makes gets the cache; session fixtures build
    without it, so a test comparing its build with theirs (tests/site/test_rebuild.py:
    `first_build`, `hot_cold`) holds the cached build byte-equal to an uncached one.
    """
    import kb.sitegen.build as site_build

    made = site_build.make_environment

    def environment(theme: Path) -> jinja2.Environment:
        env = made(theme)
        env.bytecode_cache = _COMPILED
        return env

    monkeypatch.setattr(site_build, "make_environment", environment)


def load(records: Path):  # type: ignore[no-untyped-def]
    """The checked knowledge base of a records tree (references indexed)."""
    from kb.api import open_kb, validate

    result = validate(records, remember=False)
    return open_kb(records, checked=result), result.findings


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A run of browser tests of this folder shares one browser (tests/site/chromium.py),
    closed after the last of them, when the worker's next test is not one.

    Not kept for the whole process: Playwright's driver keeps a thread alive, and kb never
    forks beside another thread (kb.workers.can_fork), so a worker process that went on
    holding a browser would run every later test's fork pool in process (the full run on
    2 workers showed tests/workers/test_workers.py and tests/workers failing after site modules).
    """
    try:
        return (yield)  # the test's fixtures are torn down first (their contexts closed)
    finally:
        follows = nextitem is not None and nextitem.path.parent == HERE
        if not (follows and drives_a_browser(nextitem)):
            close_shared()


def shared_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder every xdist worker of this run sees (the run's base temp), else this session's."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name


def made_once(folder: Path, make: Callable[[Path], object]) -> Path:
    """`make(folder)` by the first process of the run to get here; the others wait and reuse it.

    An exclusive lock beside the folder serialises the workers; a marker written after
    `make` returns says it is whole (a worker that failed half-way leaves no marker: the
    next one starts again, and fails the same way, in its own test).
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    done = folder.with_name(folder.name + ".done")
    with open(folder.with_name(folder.name + ".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


def _copy_with_probe(folder: Path, stores: Path) -> None:
    """The copy, checked from the claims' results the run's one cold check left (tests/warm.py).

    What that check reported is kept beside the folder (`check_report`): the seeded
    check gives exactly a cold check's findings (tests/site/test_repo_copy.py). Its
    results fill the copy's store (.kb-cache) for every later copy (`warm_copy`).
    """
    from kb.api import validate
    from kb.equations.cache import STORE
    from tests.warm import seed, summary

    copy_repo(folder)
    add_probe(folder / "records")
    seed(stores, folder / ".kb-cache", kept=(STORE,))  # the records' store is per root
    before = os.getcwd()
    os.chdir(folder)  # paths as the cold check's: records/...
    try:
        result = validate(Path("records"), remember=False)
    finally:
        os.chdir(before)
    check_report(folder).write_text(json.dumps(summary(result)), encoding="utf-8")


def check_report(repo: Path) -> Path:
    """Beside `repo_copy`: what its check reported (tests/warm.py `summary`, as JSON)."""
    return repo.with_name(repo.name + ".check.json")


def warm_copy(repo_copy: Path, target: Path) -> Path:
    """What `copy_repo(target)` writes (no probe), with `repo_copy`'s store of results beside it.

    The store's entries are keyed by content, so the first check of the copy reuses the
    results of the unchanged files instead of checking the whole tree cold (~12 CPU-s).
    """
    shutil.copytree(repo_copy, target, symlinks=True)
    (target / "records" / "flops" / "xss-probe.yaml").unlink()
    return target


def small_corpus(folder: Path) -> Path:
    """A 40-record synthetic tree (bench/make_corpus.py): every kind, a build of ~100 pages.

    For the tests whose subject is building and publishing, not the shipped records: a
    cold check and build of it is ~2 CPU-s, of the shipped records ~15.
    """
    sys.path.insert(0, str(REPO / "bench"))
    import make_corpus

    make_corpus.write_corpus(40, folder)
    return folder / "records"


def _build_shipped(folder: Path, records: Path) -> None:
    """What `kb build` writes (the plans' default menus: kb.sitegen.explorer.DEFAULT_MENUS)."""
    from kb.sitegen.build import build
    from kb.sitegen.explorer import DEFAULT_MENUS

    kb, findings = load(records)
    shown = [f for f in findings if f.severity.value != "error"]
    build(kb, folder / "_site", findings=shown, plans=DEFAULT_MENUS)


@pytest.fixture(scope="session")
def repo_copy(tmp_path_factory: pytest.TempPathFactory, shipped_stores: Path) -> Path:
    """The shipped records and the probe, copied and checked once per run (tests only read it).

    Checked from `shipped_stores`, the claims' results of the run's one cold check of the
    shipped records (~4-5 CPU-s a run less than a second cold check of its own).
    """
    folder = shared_folder(tmp_path_factory, "repo")
    return made_once(folder, lambda into: _copy_with_probe(into, shipped_stores))


@pytest.fixture(scope="session")
def repo_kb(repo_copy: Path) -> KnowledgeBase:
    """`repo_copy`'s records loaded and checked once per process (`load`); tests only read it.

    One load (~0.5 CPU-s) instead of one per test: kb memoises what a page reads in the
    knowledge base's run context, as a build of it does, and no test changes a record of it
    (a test that needs a changed record makes a copy of it with `dataclasses.replace`).
    """
    kb: KnowledgeBase = load(repo_copy / "records")[0]
    return kb


@pytest.fixture(scope="session")
def shipped_charts(repo_kb: KnowledgeBase) -> list[tuple[Record, list[dict[str, Any]]]]:
    """(record, its charts) for every record of `repo_kb` whose page draws a chart, once per
    process (~2.5 CPU-s: every placement's ledger and break-even); tests only read them.

    Made after `schema_stage`, as kb.sitegen.build makes them (pages and the ledger read
    typed views): the charts equal those of a knowledge base `load` returns unstaged.
    """
    from kb.checker import schema_stage
    from kb.sitegen.record_page import charts_and_ledger

    schema_stage(repo_kb)
    found = [(record, charts_and_ledger(record, repo_kb)["charts"]) for record in repo_kb]
    return [(record, charts) for record, charts in found if charts]


@pytest.fixture(scope="session")
def built_site(repo_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`repo_copy` built as `kb build` builds it (the placement explorer and the worked
    tables included) once per run, shared by every worker (the tests only read it): the
    crawl's site and the explorer's."""
    folder = shared_folder(tmp_path_factory, "site")
    return made_once(folder, lambda into: _build_shipped(into, repo_copy / "records")) / "_site"
