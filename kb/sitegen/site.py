"""The site being built: its knowledge base, writer, manifest and what each job rendered.

`Site` is what every page step of kb.sitegen.build is handed (record pages, the
planner's pages, the indexes); it sits in a module of its own, below those steps, so
that naming it creates no import cycle. `Rendered` is one worker job's result.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kb.findings import Finding
from kb.model import KnowledgeBase
from kb.sitegen import urls
from kb.sitegen.deps import PageInputs
from kb.sitegen.manifest import Manifest
from kb.sitegen.output import SiteWriter
from kb.sitegen.render import render_page

if TYPE_CHECKING:
    from kb.sitegen.explorer import Menus


@dataclass(frozen=True)
class Rendered:
    """What one job wrote (picklable plain data): files, and a rendered page's charts."""

    written: list[str]
    kept: list[str]
    rendered: list[str]
    charts: tuple[str, list[dict[str, Any]]] | None  # (record id, its charts) for a page


@dataclass
class Site:
    """What every page step needs: the records, the templates, the validation result."""

    kb: KnowledgeBase
    findings: list[Finding]
    writer: SiteWriter
    env: Any
    inputs: PageInputs
    previous: Manifest
    common: dict[str, Any]  # context every page shares (the navigation)
    manifest: Manifest = field(default_factory=Manifest)
    charts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # this build's
    rendered: list[str] = field(default_factory=list)
    early: dict[str, Any] = field(default_factory=dict)  # made beside the record pages (prepare)
    plans: Menus | None = None  # the planner's pages and their menus (kb.sitegen.plan_pages)

    def page(self, template: str, page: str, **context: Any) -> None:
        self.text(page, self.rendered_page(template, page, **context))

    def rendered_page(self, template: str, page: str, **context: Any) -> str:
        return render_page(self.env, template, page, {**self.common, **context})

    def text(self, page: str, text: str) -> None:
        self.writer.write_text(page, text)
        self.rendered.append(page)

    def reuse(self, page: str, key: str) -> bool:
        """Record the page's key; keep last build's file if it was made from the same inputs."""
        self.manifest.pages[page] = key
        return self.previous.pages.get(page) == key and self.writer.reuse(page)

    def reuse_record(self, record_id: str, key: str) -> bool:
        """`reuse` for a record's page, whose charts' anchors the manifest carries over."""
        page, anchors = urls.record_page(record_id), self.previous.charts.get(record_id)
        self.manifest.pages[page] = key
        if anchors is None or not self.reuse(page, key):
            return False
        self.manifest.charts[record_id] = anchors
        return True

    def scratch(self) -> Site:
        """A view of the site writing into the same folder, with lists of its own (one job's)."""
        return replace(self, writer=replace(self.writer, written=[], kept=[]), rendered=[])

    def absorb(self, result: Rendered) -> None:
        """Take in what a job rendered (kb.sitegen.record_pages), here or in a worker."""
        self.writer.written += result.written
        self.writer.kept += result.kept
        self.rendered += result.rendered
        if result.charts is not None:
            record_id, charts = result.charts
            self.charts[record_id] = charts
            self.manifest.charts[record_id] = [str(chart["anchor"]) for chart in charts]
