"""`build(kb, out_dir)`: the whole static site, published only complete, deterministically.

The body of `build` is the site's table of contents. Each `write_*` step renders
one page type from its context builder; nothing here validates (the `kb build`
command refuses a knowledge base with errors before it calls this). Record
pages, record JSON, kind indexes and the charts page are rendered only when
their inputs changed since the last build (kb.sitegen.deps, kb.sitegen.manifest);
the search index is joined from per-record entries, each made again only when
its inputs changed; the few other site-wide pages (home, search, ...) are
rendered every time. While workers render the record pages, this process makes
what the later steps need (`prepare`: search entries, kind indexes, the hardware table).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.findings import Finding, Severity
from kb.gcpause import frozen
from kb.model import KINDS, KnowledgeBase
from kb.resources import seed_000_text, theme_dir
from kb.sitegen import home, urls
from kb.sitegen.calc_records import INPUT_KINDS, picker_script
from kb.sitegen.catalogue import registered_rules, rule_entries
from kb.sitegen.deps import PageInputs
from kb.sitegen.explorer import Menus
from kb.sitegen.manifest import MANIFEST, Manifest, budget_bound, fingerprint, load_manifest
from kb.sitegen.methodology import methodology_blocks
from kb.sitegen.output import staged_output
from kb.sitegen.plan_pages import menus_salt, planned_ids, write_plan_pages
from kb.sitegen.record_page import charts_and_ledger, latest_changes
from kb.sitegen.record_pages import write_record_pages
from kb.sitegen.render import make_environment
from kb.sitegen.search import entry_text, index_script
from kb.sitegen.site import Site
from kb.sitegen.tables import hardware_table, kind_table

STATIC_FILES = (
    "style.css",
    "search.js",
    "sort.js",
    "calc.js",
    "scrollers.js",
    "reveal.js",
    "explore.js",
    "explore.css",
)
STATUS_LIMIT = 200  # findings listed on the status page; `kb validate` lists them all
CHARTS_INLINE = 24  # the charts page draws this many; the rest are links to their records
Progress = Callable[[int], None]


@dataclass
class BuildReport:
    """What a build did: files rewritten and files kept byte-identical from the last build."""

    out_dir: Path
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    rendered: list[str] = field(default_factory=list)


def build(
    kb: KnowledgeBase,
    out_dir: Path,
    *,
    findings: Iterable[Finding] = (),
    theme: Path | None = None,
    progress: Progress | None = None,
    site_url: str | None = None,
    plans: Menus | None = None,
) -> BuildReport:
    """Write the whole site for `kb` into `out_dir` (published only when complete).

    `kb` is a checked knowledge base: its pages read typed views (kb.kinds), so it
    carries its validation's schema verdict (kb.api.open_kb(root, checked=...)).
    `theme` defaults to the package's own (kb.resources); the schemas and the
    methodology text are always the ones kb validates with. `plans`: the menus of
    the placement explorer and the worked tables, each of whose questions kb.plan
    prices at build time (kb.sitegen.plan_pages; `kb build` passes DEFAULT_MENUS unless
    `--no-plans`); None (this function's default) builds neither, nor links to them.
    """
    theme = theme if theme is not None else theme_dir()
    kb.freeze()  # the records a site shows are fixed (and its dependency graph built once)
    with frozen(), staged_output(Path(out_dir)) as writer:  # the collector skips the records
        salt = fingerprint(theme) + (f":{menus_salt(kb, plans)}" if plans is not None else "")
        site = Site(
            kb,
            list(findings),
            writer,
            make_environment(theme),
            PageInputs(kb, salt),
            load_manifest(writer.previous, salt),
            {"kinds": kind_links(kb), "planned": planned_ids(kb, plans) if plans else frozenset()},
            plans=plans,
        )
        with analysing_only(kb, shown_again(site)):
            write_static(site, theme)
            write_home(site)
            write_record_pages(site, progress, lambda: prepare(site))
            write_kind_indexes(site)
            write_hardware_table(site)
            write_charts(site)
            write_rules_catalogue(site)
            write_methodology(site)
            write_schemas(site, site_url)
            write_search(site)
            write_calc_records(site)
            write_plan_pages(site)
            kept = Manifest() if budget_bound(kb) else site.manifest
        writer.write_bytes(MANIFEST, kept.encoded(salt))
    return BuildReport(Path(out_dir), writer.written, writer.kept, site.rendered)


def shown_again(site: Site) -> set[str] | None:
    """The ids whose equations results this build can show, or None for every record.

    The pages and search entries made again read the engine's results of records
    among their inputs (kb.sitegen.deps: a page's full inputs, an entry's); the
    kept ones read none. None for a build that keeps nothing (the first, a new
    fingerprint): it renders every page.
    """
    if not site.previous.pages:
        return None
    inputs, published, shown = site.inputs, site.writer.published, set()
    for record in site.kb:
        page = urls.record_page(record.id)
        if (
            site.previous.pages.get(page) != inputs.record_key(record)
            or record.id not in site.previous.charts
            or page not in published
        ):
            shown |= inputs.record_inputs(record)[0]
        entry = site.previous.search.get(record.id)
        if entry is None or entry[0] != inputs.search_key(record):
            shown |= inputs.search_inputs(record)
    return shown


@contextmanager
def analysing_only(kb: KnowledgeBase, ids: set[str] | None) -> Iterator[None]:
    """The equations engine run, when first asked, on the records of `ids` alone (all: None).

    Through the run's focus (kb.run.focus: the engine analyses the records in it);
    afterwards the focus and the partial analysis are dropped, so a later reader of
    `kb` runs a whole one. A knowledge base already analysed keeps its analysis.
    """
    from kb.equations.engine import EQUATIONS
    from kb.sitegen.prose_view import CLAIM_VALUES

    run = kb.run
    if ids is None or run.kept(EQUATIONS) is not None or run.focus is not None:
        yield
        return
    run.focus = frozenset(r.path for r in map(kb.get, ids) if r is not None)
    try:
        yield
    finally:
        run.focus = None
        run.drop(EQUATIONS, CLAIM_VALUES)


def write_static(site: Site, theme: Path) -> None:
    for name in STATIC_FILES:
        site.writer.write_bytes(f"static/{name}", (theme / "static" / name).read_bytes())


def write_home(site: Site) -> None:
    """The home page (questions, the narrative, a worked placement) and the status page."""
    status = validation_status(site.findings)
    site.page(
        "home.html",
        urls.HOME,
        status=status,
        status_url=urls.STATUS,
        questions=home.questions(site.kb),
        example=home.worked_example(site.kb),
        changes=latest_changes(site.kb),
        total=len(site.kb),
    )
    site.page("status.html", urls.STATUS, status=status, limit=STATUS_LIMIT)


def prepare(site: Site) -> None:
    """The later steps' own work, done while workers render the record pages.

    The search entries and the kind indexes and hardware table the last build's
    cannot stand for, kept in `site.early` for the steps, which make anything
    missing from it themselves: whether this ran never changes a byte.
    """
    for record in site.kb:
        key, old = site.inputs.search_key(record), site.previous.search.get(record.id)
        if old is None or old[0] != key:
            site.early[f"search:{record.id}"] = (key, entry_text(record, site.kb))
    for kind in KINDS:
        page = urls.kind_index(kind)
        if site.previous.pages.get(page) != site.inputs.table_key("kind", kind):
            site.early[page] = _kind_index(site, kind)
    if site.previous.pages.get(urls.HARDWARE_TABLE) != _hardware_key(site):
        site.early[urls.HARDWARE_TABLE] = _hardware(site)


def _made(site: Site, page: str, make: Callable[[], str]) -> None:
    """Write `page` from what prepare made early, else make it now."""
    text = site.early.pop(page, None)
    site.text(page, text if text is not None else make())


def write_kind_indexes(site: Site) -> None:
    for kind in KINDS:
        if not site.reuse(urls.kind_index(kind), site.inputs.table_key("kind", kind)):
            _made(site, urls.kind_index(kind), lambda: _kind_index(site, kind))  # noqa: B023


def _kind_index(site: Site, kind: str) -> str:
    table = kind_table(site.kb, kind)
    return site.rendered_page("kind_index.html", urls.kind_index(kind), kind=kind, table=table)


def write_hardware_table(site: Site) -> None:
    if not site.reuse(urls.HARDWARE_TABLE, _hardware_key(site)):
        _made(site, urls.HARDWARE_TABLE, lambda: _hardware(site))


def _hardware_key(site: Site) -> str:
    return site.inputs.table_key("compare", "accelerator")


def _hardware(site: Site) -> str:
    table = hardware_table(site.kb)
    return site.rendered_page("hardware.html", urls.HARDWARE_TABLE, table=table)


def write_charts(site: Site) -> None:
    """Every chart, in record order: the first few drawn, the rest linked.

    Kept from the last build while every record with charts keeps its page's key.
    """
    charted = [r for r in site.kb if site.manifest.charts.get(r.id)]
    pages = [site.manifest.pages[urls.record_page(r.id)] for r in charted]
    if site.reuse(urls.CHARTS, site.inputs.key("charts", urls.CHARTS, pages=pages)):
        return
    entries: list[dict[str, Any]] = []
    for record in charted:
        charts = [{"anchor": anchor} for anchor in site.manifest.charts[record.id]]
        if len(entries) < CHARTS_INLINE:  # drawn: from this build's page, else computed
            charts = site.charts.get(record.id) or charts_and_ledger(record, site.kb)["charts"]
        url = urls.record_page(record.id)
        entries.extend({"record": record, "url": url, "chart": chart} for chart in charts)
    shown, listed = entries[:CHARTS_INLINE], entries[CHARTS_INLINE:]
    site.page("charts.html", urls.CHARTS, entries=shown, more=listed)


def write_rules_catalogue(site: Site) -> None:
    site.page("rules.html", urls.RULES, rules=rule_entries(registered_rules()))


def write_methodology(site: Site) -> None:
    blocks = methodology_blocks(seed_000_text())
    site.page("methodology.html", urls.METHODOLOGY, blocks=blocks)


def write_schemas(site: Site, site_url: str | None) -> None:
    """The schemas kb validates with, `$id`s under the site's URL (or none: relative `$ref`s)."""
    from kb.schema import load_schemas
    from kb.schema_export import exported_text

    names = sorted(load_schemas())
    base = site_url.rstrip("/") + "/schemas" if site_url else None
    for name in names:
        site.writer.write_text(urls.schema_json(name), exported_text(name, base))
    site.page("schemas.html", urls.SCHEMAS, schemas=names)


def write_search(site: Site) -> None:
    """The search index, joined from each record's entry, the last build's where its key holds.

    The file itself is kept while every entry's key and the order of records are.
    """
    entries, previous = [], site.previous.search
    for record in site.kb:
        key = site.inputs.search_key(record)
        old = previous.get(record.id)
        if old is None or old[0] != key:
            old = site.early.pop(f"search:{record.id}", None)  # made by prepare
        text = old[1] if old is not None and old[0] == key else entry_text(record, site.kb)
        site.manifest.search[record.id] = (key, text)
        entries.append(text)
    keys = [key for key, _ in site.manifest.search.values()]
    if not site.reuse(urls.SEARCH_INDEX, site.inputs.key("search", urls.SEARCH_INDEX, pages=keys)):
        site.writer.write_text(urls.SEARCH_INDEX, index_script(entries))
    site.page("search.html", urls.SEARCH)


def write_calc_records(site: Site) -> None:
    """Every accelerator, interconnect and model the calculators offer, once per site.

    Its inputs are every record of those kinds and every flop class (which fields
    they bind): kept from the last build while none of them changed.
    """
    key = site.inputs.key("calc", urls.CALC_RECORDS, (), (), INPUT_KINDS)
    if not site.reuse(urls.CALC_RECORDS, key):
        site.writer.write_text(urls.CALC_RECORDS, picker_script(site.kb))


def kind_links(kb: KnowledgeBase) -> list[dict[str, Any]]:
    counts = Counter(record.kind for record in kb)
    return [{"kind": k, "url": urls.kind_index(k), "count": counts.get(k, 0)} for k in KINDS]


def validation_status(findings: list[Finding]) -> dict[str, Any]:
    """Count findings per severity; keep the non-error ones a published site shows."""
    counts = Counter(f.severity.value for f in findings)
    shown = sorted((f for f in findings if f.severity is not Severity.ERROR), key=Finding.sort_key)
    per_code = Counter((f.code, f.severity.value) for f in shown)
    by_code = [
        {"code": code, "severity": severity, "count": count}
        for (code, severity), count in sorted(per_code.items())
    ]
    return {
        "counts": {s.value: counts.get(s.value, 0) for s in Severity},
        "findings": shown,
        "by_code": by_code,
    }
