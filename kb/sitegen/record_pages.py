"""The record pages and record JSON: kept when their inputs are unchanged, else rendered.

First every page whose key (kb.sitegen.deps) matches the last build is kept
(a hard link, no rendering). The rest are rendered, on every core when there
are many (a cold build of thousands of records): pages are independent, so
forked workers render batches straight into the staging folder and send back
only what the parent records (file lists, chart data). With one core, KB_JOBS=1,
no fork, or any failure in a worker, the batch is rendered in-process; the
bytes written never depend on which way ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kb.model import Record
from kb.sitegen import urls
from kb.sitegen.record_page import record_context
from kb.workers import map_forked

if TYPE_CHECKING:
    from kb.sitegen.build import Site

PARALLEL_FROM = 1000  # fewer pages than this render faster than workers fork
BATCH = 500  # pages per batch of workers; the progress bar moves once per batch
Progress = Callable[[int], None]


@dataclass(frozen=True)
class Job:
    """One record whose page and/or JSON must be rendered."""

    record: Record
    page: bool
    json: bool


def write_record_pages(site: Site, progress: Progress | None) -> None:
    """Keep or render every record's page and JSON, then report progress per record."""
    jobs = []
    for record in site.kb:
        job = Job(record, not _keep_page(site, record), not _keep_json(site, record))
        if job.page or job.json:
            jobs.append(job)
        elif progress is not None:
            progress(1)
    parallel = len(jobs) >= PARALLEL_FROM
    if parallel:
        _analyse_once(site)
    for start in range(0, len(jobs), BATCH):
        batch = jobs[start : start + BATCH]
        _render_batch(site, batch, parallel)
        if progress is not None:
            progress(len(batch))


def _analyse_once(site: Site) -> None:
    """Run the whole-base equations analysis before forking (kb build's check already has).

    Workers would otherwise each redo it for every batch: their memo dies with them.
    """
    try:
        from kb.equations.engine import analyse

        analyse(site.kb)
    except Exception:  # noqa: BLE001 - the pages report the engine's failure themselves
        return


def _keep_page(site: Site, record: Record) -> bool:
    page, key = urls.record_page(record.id), site.inputs.record_key(record)
    anchors = site.previous.charts.get(record.id)
    site.manifest.pages[page] = key
    if anchors is not None and site.reuse(page, key):
        site.manifest.charts[record.id] = anchors
        return True
    return False


def _keep_json(site: Site, record: Record) -> bool:
    return site.reuse(urls.record_json(record.id), site.inputs.json_key(record))


def _render_batch(site: Site, batch: list[Job], parallel: bool) -> None:
    results = map_forked(lambda job: _render(site, job), batch, 1) if parallel else None
    if results is None:  # in-process: the writer's lists are already up to date
        results = [_render(site, job) for job in batch]
    else:  # workers: their writes are in staging, their lists come back here
        for result in results:
            site.writer.written.extend(result["written"])
            site.writer.kept.extend(result["kept"])
            site.rendered.extend(result["rendered"])
    for job, result in zip(batch, results, strict=True):
        if job.page:
            site.charts[job.record.id] = result["charts"]
            site.manifest.charts[job.record.id] = [str(c["anchor"]) for c in result["charts"]]


def _render(site: Site, job: Job) -> dict[str, Any]:
    """Render one job; return what it wrote and its charts (picklable plain data)."""
    marks = len(site.writer.written), len(site.writer.kept), len(site.rendered)
    charts: list[dict[str, Any]] = []
    record = job.record
    if job.page:
        context = record_context(record, site.kb)
        site.page("record.html", urls.record_page(record.id), **context)
        charts = context["charts"]
    if job.json:
        json_page = urls.record_json(record.id)
        site.writer.write_text(json_page, record_json(record.data))
        site.rendered.append(json_page)
    return {
        "charts": charts,
        "written": site.writer.written[marks[0] :],
        "kept": site.writer.kept[marks[1] :],
        "rendered": site.rendered[marks[2] :],
    }


def record_json(data: Mapping[str, Any]) -> str:
    """Write a record as JSON, in its authored key order (exact numbers as text)."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
