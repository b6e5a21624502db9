"""Incremental builds: a rebuild re-renders only the pages whose inputs changed, and its
output is byte-identical to a cold build of the changed records.

Each case edits the records on disk, re-checks them, rebuilds over the previous
site and builds the same records cold into an empty folder; the two trees must be
equal file for file. The renderer's `rendered` list says which pages were rendered.
The last tests check the declared inputs (kb.sitegen.deps) against what rendering
a page actually reads from the knowledge base.

Per push the tree is the rebuild sample (tests/site/sample_site.py: 173 shipped records,
among them every record a test here edits or reads), not the 446 shipped records: what a
change re-renders is decided per kind of edge between a page and a record it reads, and
the sample has every kind of edge the shipped records have and renders every template
(tests/site/test_sample_site.py holds both per push), so each path of the dependency
tracking is exercised; the declared-inputs tests read every page of the sample (and of a
synthetic corpus). `KB_FULL=1` runs every test here on the shipped records.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from kb.model import KINDS, KnowledgeBase, is_valid_id
from kb.sitegen.build import BuildReport, build
from kb.sitegen.deps import PageInputs
from kb.sitegen.manifest import MANIFEST
from kb.sitegen.record_page import record_context
from kb.sitegen.tables import hardware_table, kind_table
from tests.site.conftest import REPO, add_probe, load
from tests.site.sample_site import seeded_records

# Each test's builds compile the theme's templates once per process (tests/site/conftest.py);
# `first_build` and `hot_cold` build without that cache and are compared with them.
pytestmark = pytest.mark.usefixtures("compiled_templates")

HOT = "hardware/nvidia-h100-sxm"
UNRELATED = "records/sources/arxiv-gpipe.html"


def tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def edit(records: Path, record_id: str, change: Callable[[str], str]) -> None:
    path = records / f"{record_id}.yaml"
    before = path.read_text(encoding="utf-8")
    after = change(before)
    assert after != before, f"the edit of {record_id} changed nothing"
    path.write_text(after, encoding="utf-8")


def rebuild_and_compare(root: Path, out: Path, cold: Path) -> BuildReport:
    """Rebuild `out` incrementally and `cold` from nothing; their trees must be identical."""
    kb, _ = load(root / "records")
    report = build(kb, out)
    build(kb, cold)
    assert tree(out) == tree(cold)
    return report


@pytest.fixture(scope="session")  # not "module": xdist may come back to a module on a worker
def first_build(
    tmp_path_factory: pytest.TempPathFactory, shipped_stores: Path
) -> tuple[Path, Path, BuildReport]:
    """One cold build of the rebuild sample per process, kept aside; `site` restores it.

    The copy is built in the place every test then works in (`place`): a page's key names
    its record's path (kb.sitegen.deps), so a site moved elsewhere would be rebuilt whole.
    The record cache (`.kb-cache`) is kept with the records, so a test's load re-checks
    only the files it edited; each test's cold build still renders every page afresh.
    """
    place = tmp_path_factory.mktemp("rebuild")
    root = place / "repo"
    kb, _ = load(seeded_records(root, shipped_stores))
    report = build(kb, place / "_site")
    kept = tmp_path_factory.mktemp("rebuild-kept")
    shutil.copytree(place, kept / "place", symlinks=True)
    return place, kept / "place", report


def _raise_hot_bandwidth(records: Path) -> None:
    """The figure edit two tests make: the hot accelerator's bandwidth 3350 -> 3351."""
    edit(
        records, HOT, lambda t: t.replace("bandwidth: {value: 3350,", "bandwidth: {value: 3351,", 1)
    )


@pytest.fixture(scope="session")
def hot_cold(
    first_build: tuple[Path, Path, BuildReport], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A cold build of the sample after `_raise_hot_bandwidth`, made once; tests only read it.

    Built from the records at the place the tests' sites are (a page's key names its
    record's path), which it leaves as `first_build` kept them.
    """
    place, kept, _ = first_build
    shutil.rmtree(place)
    shutil.copytree(kept, place, symlinks=True)
    _raise_hot_bandwidth(place / "repo" / "records")
    cold = tmp_path_factory.mktemp("hot-cold") / "_site"
    build(load(place / "repo" / "records")[0], cold)
    shutil.rmtree(place)
    shutil.copytree(kept, place, symlinks=True)
    return cold


@pytest.fixture()
def site(first_build: tuple[Path, Path, BuildReport]) -> tuple[Path, Path, BuildReport]:
    """The records and a site built from them (a fresh copy of `first_build` for each test)."""
    place, kept, report = first_build
    shutil.rmtree(place)
    shutil.copytree(kept, place, symlinks=True)
    return place / "repo", place / "_site", copy.deepcopy(report)


def test_a_cold_build_renders_every_page_and_an_unchanged_rebuild_none(
    site: tuple[Path, Path, BuildReport],
) -> None:
    root, out, first = site
    assert f"records/{HOT}.html" in first.rendered and UNRELATED in first.rendered
    kb, _ = load(root / "records")
    again = build(kb, out)
    assert [p for p in again.rendered if p.startswith("records/")] == []
    assert again.written == []


def test_a_changed_figure_re_renders_its_dependents_only(
    hot_cold: Path,
    site: tuple[Path, Path, BuildReport],
) -> None:
    root, out, first = site
    _raise_hot_bandwidth(root / "records")
    report = build(load(root / "records")[0], out)
    assert tree(out) == tree(hot_cold)  # the rebuild equals a cold build of the same records
    rendered = set(report.rendered)
    assert {f"records/{HOT}.html", f"records/{HOT}.json", "records/hardware/index.html"} <= rendered
    # a flop class that binds the accelerator's bandwidth shows it in its claims and chart
    assert "records/flops/decode-weight-read.html" in rendered
    assert UNRELATED not in rendered and "records/sources/index.html" not in rendered
    assert f"records/{HOT}.json" in report.written
    record_pages = [p for p in rendered if p.startswith("records/") and p.endswith(".html")]
    assert 0 < len(record_pages) < len(first.rendered) / 4


def test_a_retitled_source_re_renders_the_pages_that_link_it(
    site: tuple[Path, Path, BuildReport],
    tmp_path: Path,
) -> None:
    root, out, _ = site
    source = "sources/gcp-tpu-v5e"
    edit(
        root / "records",
        source,
        lambda t: re.sub(r"(?m)^title: .*$", "title: Renamed doc", t, count=1),
    )
    report = rebuild_and_compare(root, out, tmp_path / "cold")
    assert "records/hardware/google-tpu-v5e.html" in report.rendered  # its badges link it
    assert "Renamed doc" in (out / "records/hardware/google-tpu-v5e.html").read_text()
    assert UNRELATED not in report.rendered


def test_a_new_referrer_and_a_removed_record_change_the_pages_that_show_them(
    site: tuple[Path, Path, BuildReport],
    tmp_path: Path,
) -> None:
    root, out, _ = site
    records = root / "records"
    copy = (records / "receipts/azure-nd-h100-v5-hbm-bandwidth.yaml").read_text(encoding="utf-8")
    (records / "receipts/azure-nd-h100-v5-hbm-bandwidth-copy.yaml").write_text(
        copy.replace(
            "id: receipts/azure-nd-h100-v5-hbm-bandwidth",
            "id: receipts/azure-nd-h100-v5-hbm-bandwidth-copy",
        ),
        encoding="utf-8",
    )
    (records / "sources/arxiv-gpipe.yaml").unlink()
    report = rebuild_and_compare(root, out, tmp_path / "cold")
    assert f"records/{HOT}.html" in report.rendered  # "used by" lists the new receipt
    assert "hbm-bandwidth-copy" in (out / f"records/{HOT}.html").read_text()
    assert not (out / UNRELATED).exists()


def test_a_figure_only_the_pickers_show_rewrites_the_shared_file_not_the_pages(
    site: tuple[Path, Path, BuildReport],
    tmp_path: Path,
) -> None:
    """The calculators offer every accelerator from one shared file (calc_records).

    An accelerator no flop class names changes: the shared file is rewritten with
    its new figure, the flop-class pages are kept (their bytes never held it), and
    the site equals a cold build of the changed records.
    """
    root, out, _ = site
    other = "hardware/google-tpu-v5p"
    before = (out / "calc-records.js").read_text(encoding="utf-8")
    assert f'"{other}"' in before
    edit(
        root / "records",
        other,
        lambda t: re.sub(r"(\n  bandwidth: \{value: )(\d+)", r"\g<1>2766", t, count=1),
    )
    report = rebuild_and_compare(root, out, tmp_path / "cold")
    assert "calc-records.js" in report.written
    assert "2766000000000" in (out / "calc-records.js").read_text(encoding="utf-8")
    flop_pages = [p for p in report.rendered if p.startswith("records/flops/")]
    named = [p for p in flop_pages if other in (out / p).read_text(encoding="utf-8")]
    assert flop_pages == named  # only pages that name it were rendered again


def test_a_page_shows_only_the_title_of_a_source_it_cites(
    site: tuple[Path, Path, BuildReport],
    tmp_path: Path,
) -> None:
    """A flop class names its sources (provenance links): a change past the title keeps it."""
    root, out, _ = site
    flop, source = "flops/decode-weight-read", "sources/jax-scaling-book-inference"
    assert source in (out / f"records/{flop}.html").read_text(encoding="utf-8")
    edit(root / "records", source, lambda t: re.sub(r"(?m)^publisher: .*$", "publisher: X", t))
    report = rebuild_and_compare(root, out, tmp_path / "cold")
    assert f"records/{source}.html" in report.rendered
    assert f"records/{flop}.html" not in report.rendered


def test_a_string_that_names_a_record_it_does_not_reference_is_text(
    site: tuple[Path, Path, BuildReport],
    tmp_path: Path,
) -> None:
    """Only references (kb.reads: the schemas' `x-kb-ref`, bindings) link a record.

    An accelerator's vendor that happens to be a record's id is text, so the
    page does not read that record: retitling it renders the page again nowhere.
    """
    root, out, _ = site
    other = "sources/arxiv-gpipe"
    edit(
        root / "records", HOT, lambda t: t.replace("\nvendor: NVIDIA\n", f"\nvendor: {other}\n", 1)
    )
    kb, findings = load(root / "records")
    assert not [f for f in findings if f.severity.value == "error"]  # a valid vendor
    build(kb, out)
    page = (out / f"records/{HOT}.html").read_text(encoding="utf-8")
    assert other in page and f'{other}.html"' not in page
    assert other not in set().union(*PageInputs(kb, "test").record_inputs(kb.get(HOT)))
    edit(root / "records", other, lambda t: re.sub(r"(?m)^title: .*$", "title: Renamed", t))
    report = rebuild_and_compare(root, out, tmp_path / "cold")
    assert f"records/{HOT}.html" not in report.rendered
    assert f"records/{other}.html" in report.rendered


def test_a_template_outside_prose_stays_text(
    site: tuple[Path, Path, BuildReport],
    tmp_path: Path,
) -> None:
    """Templates in prose are references; one in another field names nothing and shows as written.

    So the page does not read the record it names: changing that figure keeps the page.
    """
    root, out, _ = site
    template = "{hardware/google-tpu-v5e#memory.bandwidth}"
    edit(
        root / "records",
        HOT,
        lambda t: t.replace("\nvendor: NVIDIA\n", f'\nvendor: "{template}"\n', 1),
    )
    kb, findings = load(root / "records")
    assert not [f for f in findings if f.severity.value == "error"]
    build(kb, out)
    assert template in (out / f"records/{HOT}.html").read_text(encoding="utf-8")
    edit(
        root / "records",
        "hardware/google-tpu-v5e",
        lambda t: re.sub(r"(\n  bandwidth: \{value: )(\d+)", r"\g<1>777", t, count=1),
    )
    report = rebuild_and_compare(root, out, tmp_path / "cold")
    assert f"records/{HOT}.html" not in report.rendered


def test_a_changed_template_re_renders_everything(
    site: tuple[Path, Path, BuildReport],
    tmp_path: Path,
) -> None:
    root, out, first = site
    theme = tmp_path / "theme"
    shutil.copytree(REPO / "kb" / "theme", theme)
    base = theme / "templates" / "base.html"
    base.write_text(
        base.read_text(encoding="utf-8").replace("compute-placement tax", "placement tax"),
        encoding="utf-8",
    )
    kb, _ = load(root / "records")
    report = build(kb, out, theme=theme)
    assert sorted(report.rendered) == sorted(first.rendered)
    page = (out / f"records/{HOT}.html").read_text(encoding="utf-8")
    assert "<span>placement tax</span>" in page and "compute-placement tax<" not in page
    build(kb, tmp_path / "cold", theme=theme)
    assert tree(out) == tree(tmp_path / "cold")


def test_a_damaged_manifest_means_a_full_build(
    site: tuple[Path, Path, BuildReport],
) -> None:
    root, out, first = site
    manifest = out / MANIFEST
    data = bytearray(manifest.read_bytes())
    data[len(data) // 2] ^= 0x10  # one flipped bit: its checksum no longer holds
    manifest.write_bytes(bytes(data))
    kb, _ = load(root / "records")
    report = build(kb, out)
    assert sorted(report.rendered) == sorted(first.rendered)


def test_the_synthetic_hot_record_rebuild_matches_a_cold_build(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    import make_corpus

    make_corpus.write_corpus(40, tmp_path / "corpus")  # as small_corpus: every kind
    root, out = tmp_path / "corpus", tmp_path / "_site"
    kb, _ = load(root / "records")
    first = build(kb, out)
    edit(
        root / "records",
        make_corpus.HOT_HARDWARE,
        lambda t: re.sub(
            r"(\n  bandwidth: \{value: )(\d+)",
            lambda m: f"{m.group(1)}{int(m.group(2)) + 1}",
            t,
            count=1,
        ),
    )
    report = rebuild_and_compare(root, out, tmp_path / "cold")
    pages = [p for p in report.rendered if p.endswith(".html") and p.count("/") == 2]
    assert 0 < len(pages) < len(first.rendered) / 3


class TitleOnly(Mapping):  # type: ignore[type-arg]
    """A record's data that logs every read other than its title."""

    def __init__(self, data: Mapping, record_id: str, log: set[str]) -> None:  # type: ignore[type-arg]
        self.data, self.record_id, self.log = data, record_id, log

    def __getitem__(self, key: str) -> Any:
        if key != "title":
            self.log.add(f"{self.record_id}:{key}")
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        self.log.add(f"{self.record_id}:*")
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


class TrackingKB(KnowledgeBase):
    """A knowledge base that logs which records and kinds a page reads.

    Records the page declares it shows only the title of are handed out with
    data that logs any other read.
    """

    read: set[str]
    kinds: set[str]
    title_only: set[str]
    beyond_title: set[str]

    def start(self, title_only: set[str]) -> None:
        self.read, self.kinds, self.title_only, self.beyond_title = set(), set(), title_only, set()

    def get(self, record_id: str):  # type: ignore[no-untyped-def]
        if is_valid_id(record_id):  # anything else can never name a record
            self.read.add(record_id)
        record = super().get(record_id)
        if record is not None and record_id in self.title_only:
            data = TitleOnly(record.data, record_id, self.beyond_title)
            return dataclasses.replace(record, data=data)
        return record

    def of_kind(self, kind: str):  # type: ignore[no-untyped-def]
        self.kinds.add(kind)
        return super().of_kind(kind)


def tracking(kb: KnowledgeBase) -> TrackingKB:
    from kb.equations.engine import analyse

    tracked = TrackingKB(kb.root, kb.records, kb.duplicates, kb.references)
    tracked.freeze()  # its dependency graph built once, as a build's is
    tracked.start(set())
    tracked.run.schema = kb.run.schema  # load() opens it with its validation's schema verdict
    analyse(tracked)  # the whole-base analysis the checker already ran, outside any page
    return tracked


@pytest.fixture(scope="session")
def corpora(tmp_path_factory: pytest.TempPathFactory, shipped_stores: Path) -> list[KnowledgeBase]:
    """The rebuild sample (the shipped records with KB_FULL=1) with the probe, and a synthetic
    corpus, loaded once for the tests that only read them."""
    sys.path.insert(0, str(REPO / "bench"))
    import make_corpus

    place = tmp_path_factory.mktemp("corpora")
    make_corpus.write_corpus(120, place / "corpus")
    records = seeded_records(place / "sample", shipped_stores)
    add_probe(records)
    return [load(records)[0], load(place / "corpus" / "records")[0]]


def test_a_record_page_reads_only_its_declared_inputs(corpora: list[KnowledgeBase]) -> None:
    for kb in corpora:
        tracked = tracking(kb)
        inputs = PageInputs(kb, "test")
        for record in kb:
            full, titles = inputs.record_inputs(record)
            tracked.start(titles)
            record_context(record, tracked)
            assert tracked.read <= full | titles, record.id
            assert tracked.beyond_title == set(), record.id
            assert tracked.kinds <= set(inputs.record_kinds(record)), record.id


def test_a_table_of_a_kind_reads_only_its_declared_inputs(corpora: list[KnowledgeBase]) -> None:
    for kb in corpora:
        tracked, inputs = tracking(kb), PageInputs(kb, "test")
        for kind, render in [*((k, kind_table) for k in KINDS), ("accelerator", None)]:
            own = {r.id for r in kb.of_kind(kind)}
            titles = inputs.table_inputs(kind) - own
            tracked.start(titles)
            if render is None:
                hardware_table(tracked)
            else:
                render(tracked, kind)
            assert tracked.read <= own | titles, kind
            assert tracked.beyond_title == set(), kind


def test_pages_rendered_by_workers_equal_pages_rendered_in_process(
    site: tuple[Path, Path, BuildReport], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kb.sitegen.record_pages as record_pages

    root, out, serial = site  # the rebuild sample (its record cache kept: a quick load)
    kb, _ = load(root / "records")
    # `out` is first_build's cold build: every page rendered in this process, as the
    # sample has fewer pages than a build renders with workers (PARALLEL_FROM)
    assert len(kb) < record_pages.PARALLEL_FROM
    ran: list[bool] = []
    real = record_pages.map_forked

    def recorded(function, items, *args, **kwargs):  # type: ignore[no-untyped-def]
        results = real(function, items, *args, **kwargs)
        ran.append(results is not None)
        return results

    import kb.sitegen.build as site_build

    early: list[Any] = []
    real_prepare = site_build.prepare

    def prepared(site):  # type: ignore[no-untyped-def]
        real_prepare(site)
        early.append((len(site.early), site))

    monkeypatch.setattr(record_pages, "map_forked", recorded)
    monkeypatch.setattr(record_pages, "PARALLEL_FROM", 1)
    monkeypatch.setattr(record_pages, "TASK", 40)
    monkeypatch.setattr(site_build, "prepare", prepared)
    monkeypatch.setenv("KB_JOBS", "2")
    steps: list[int] = []
    parallel = build(kb, tmp_path / "parallel", progress=steps.append)
    assert ran == [True]  # one pool rendered every page
    # Beside it, this process made every search entry, kind index and the hardware
    # table, and the later steps took each of them.
    assert [made for made, _ in early] == [len(kb) + len(KINDS) + 1]
    assert early[0][1].early == {}
    assert sum(steps) == len(kb) and len(steps) > 2  # the bar moved per task, to the end
    assert tree(tmp_path / "parallel") == tree(out)
    assert sorted(parallel.rendered) == sorted(serial.rendered)
    assert sorted(parallel.written) == sorted(serial.written)


def test_a_search_entry_reads_only_its_declared_inputs(corpora: list[KnowledgeBase]) -> None:
    from kb.sitegen.search import search_entry

    for kb in corpora:
        tracked, inputs = tracking(kb), PageInputs(kb, "test")
        for record in kb:
            tracked.start(set())
            search_entry(record, tracked)
            assert tracked.read <= inputs.search_inputs(record), record.id
            assert tracked.kinds == set(), record.id


def kb_build_route(records: Path) -> KnowledgeBase:
    """The records as `kb build` opens them: validated through the run snapshot."""
    from kb.api import open_kb, validate

    return open_kb(records, checked=validate(records))


def test_rebuilds_through_the_snapshot_equal_cold_builds_edit_after_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kb build's route (page keys from file digests) after each of several kinds of change.

    A figure, a title, a new record, a removed one and a change undone, one build
    after another over the same site; each equals a cold build of the same records
    made from their data (kb.sitegen.deps.data_stamp), byte for byte, but for the
    manifest (its keys are made of file digests there, of data here).

    The property needs no record of the shipped tree, so it runs on a small synthetic
    corpus (bench/make_corpus.py: every kind, flop classes binding the hot accelerator,
    receipts naming it): a cold build there costs a tenth of the shipped one's. Each kind
    of change is tested on the rebuild sample (the shipped records with KB_FULL=1), one build
    each, in the tests above.
    """
    from kb.reads import checked_nodes

    sys.path.insert(0, str(REPO / "bench"))
    import make_corpus

    root = tmp_path / "corpus"
    make_corpus.write_corpus(40, root)
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(root)
    records, out = Path("records"), tmp_path / "_site"
    first = build(kb_build_route(records), out)
    hot, source = make_corpus.HOT_HARDWARE, "sources/bench-src-0004"
    receipt, gone = "receipts/bench-receipt-0016", "receipts/bench-receipt-0015"  # cites source
    own = f"id: {receipt}\n"
    bandwidth = re.compile(r"(\n  bandwidth: \{value: )(\d+)")
    figure = bandwidth.search((records / f"{hot}.yaml").read_text()).group(2)  # type: ignore[union-attr]
    steps: list[Callable[[], None]] = [
        lambda: edit(records, hot, lambda t: bandwidth.sub(rf"\g<1>{figure}1", t, count=1)),
        lambda: edit(
            records,
            source,
            lambda t: re.sub(r"(?m)^title: .*$", "title: Renamed doc", t, count=1),
        ),
        lambda: (records / f"{receipt}-copy.yaml").write_text(
            (records / f"{receipt}.yaml").read_text().replace(own, own[:-1] + "-copy\n", 1)
        ),
        lambda: (records / f"{gone}.yaml").unlink(),
        lambda: edit(records, hot, lambda t: bandwidth.sub(rf"\g<1>{figure}", t, count=1)),
    ]
    for number, step in enumerate(steps):
        step()
        kb = kb_build_route(records)
        assert checked_nodes(kb) is not None  # the digest route, not the data one
        report = build(kb, out)
        cold = tmp_path / f"cold-{number}"
        build(load(records)[0], cold)
        pages, cold_pages = tree(out), tree(cold)
        assert pages.pop(MANIFEST) != cold_pages.pop(MANIFEST)  # keys of digests, not data
        assert pages == cold_pages, f"after step {number}"
        assert 0 < len(report.rendered) < len(first.rendered)
        if number in (0, 4):  # the figure shows on the accelerator's page
            assert f"records/{hot}.html" in report.rendered
        if number == 1:  # the title shows on the pages that link the source
            assert {f"records/{source}.html", f"records/{receipt}.html"} <= set(report.rendered)
        if number == 2:  # the added receipt is listed on its kind's index
            assert "records/receipts/index.html" in report.rendered
        if number == 3:
            assert not (out / f"records/{gone}.html").exists()
        assert [p.name for p in tmp_path.iterdir() if ".building-" in p.name] == []


def test_a_rebuild_analyses_only_the_records_whose_results_it_shows(
    hot_cold: Path, site: tuple[Path, Path, BuildReport], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine runs on the inputs of the pages made again (kb.sitegen.build.shown_again).

    A figure change re-renders the flop classes that bind it from a partial analysis;
    the site still equals a cold build, and the knowledge base is left without a focus.
    """
    import kb.equations.engine as engine

    root, out, _ = site
    _raise_hot_bandwidth(root / "records")
    kb, _ = load(root / "records")
    analysed: list[int] = []
    real = engine.analyse

    def counted(knowledge: KnowledgeBase, use_cache: bool = True):  # type: ignore[no-untyped-def]
        fresh = engine.analysed(knowledge) is None
        result = real(knowledge, use_cache)
        if fresh:
            analysed.append(sum(knowledge.in_focus(r) for r in knowledge))
        return result

    monkeypatch.setattr(engine, "analyse", counted)
    report = build(kb, out)
    assert len(analysed) == 1 and 0 < analysed[0] < len(kb)  # 133 of 265 records
    assert "records/flops/decode-weight-read.html" in report.rendered
    assert kb.run.focus is None and engine.analysed(kb) is None
    assert tree(out) == tree(hot_cold)  # a cold build of the same records
