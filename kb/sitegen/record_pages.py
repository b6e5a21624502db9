"""The record pages and record JSON: kept when their inputs are unchanged, else rendered.

First every page whose key (kb.sitegen.deps) matches the last build is kept
(left in the published site, unread: Site.reuse). The rest are rendered, on every core
when there are many (a cold build of thousands of records): pages are
independent, so one pool of forked workers (kb.workers) renders them, a task of
TASK pages at a time, straight into the staging folder. Each job renders into a
scratch view of the site (the same folder, lists of its own: Site.scratch) and
returns what it wrote and its charts, which the site takes in (Site.absorb) the
same way whichever process rendered it. With one core, KB_JOBS=1, no fork, or
any failure in a worker, the pages are rendered in-process; the bytes written
never depend on which way ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kb.model import Record
from kb.sitegen import urls
from kb.sitegen.record_page import record_context
from kb.sitegen.site import Rendered
from kb.workers import map_forked

if TYPE_CHECKING:
    from kb.sitegen.site import Site

PARALLEL_FROM = 1000  # fewer pages than this render faster than workers fork
TASK = 100  # pages per worker task; the progress bar moves once per task
BATCH = 500  # pages per step in one process; the progress bar moves once per step
Progress = Callable[[int], None]


@dataclass(frozen=True)
class Job:
    """One record whose page and/or JSON must be rendered."""

    record: Record
    page: bool
    json: bool


def write_record_pages(
    site: Site, progress: Progress | None, beside: Callable[[], object] = lambda: None
) -> None:
    """Keep or render every record's page and JSON, then report progress per record.

    `beside`: work of the later steps this process does while workers render
    (kb.workers.map_forked's `meanwhile`), if they do; it must change no byte of the site.
    """
    jobs = []
    for record in site.kb:
        page = not site.reuse_record(record.id, site.inputs.record_key(record))
        job = Job(
            record, page, not site.reuse(urls.record_json(record.id), site.inputs.json_key(record))
        )
        if job.page or job.json:
            jobs.append(job)
        elif progress is not None:
            progress(1)
    if len(jobs) >= PARALLEL_FROM:
        _analyse_once(site)
        # One pool for every page: each worker builds the memos pages share once.
        results = map_forked(
            lambda job: _render(site, job), jobs, 1, TASK, progress, meanwhile=beside
        )
        if results is not None:
            for result in results:
                site.absorb(result)
            return
    for start in range(0, len(jobs), BATCH):
        batch = jobs[start : start + BATCH]
        for job in batch:
            site.absorb(_render(site, job))
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


def _render(site: Site, job: Job) -> Rendered:
    """Render one job into a scratch view of the site; return what it wrote."""
    out = site.scratch()
    record, charts = job.record, None
    if job.page:
        context = record_context(record, site.kb)
        out.page("record.html", urls.record_page(record.id), **context)
        charts = (record.id, context["charts"])
    if job.json:
        out.text(urls.record_json(record.id), record_json(record.data))
    return Rendered(out.writer.written, out.writer.kept, out.rendered, charts)


def record_json(data: Mapping[str, Any]) -> str:
    """Write a record as JSON, in its authored key order (exact numbers as text)."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
