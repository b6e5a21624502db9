"""A stdlib checker for a static site's internal links and #anchors (no network)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

EXTERNAL = ("http:", "https:", "mailto:", "data:", "javascript:")


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        for name in ("href", "src"):
            if values.get(name) and not (tag == "form"):
                self.links.append(values[name] or "")
        if tag == "form" and values.get("action"):
            self.links.append(values["action"] or "")


def _parse(path: Path) -> _Collector:
    collector = _Collector()
    collector.feed(path.read_text(encoding="utf-8"))
    return collector


def broken_links(site: Path) -> list[str]:
    """Every internal link or anchor of every HTML page that does not resolve."""
    pages = {p: _parse(p) for p in sorted(site.rglob("*.html"))}
    problems = []
    for page, parsed in pages.items():
        for link in parsed.links:
            problem = _check(site, page, link, pages)
            if problem:
                problems.append(f"{page.relative_to(site)}: {link} ({problem})")
    return problems


def _check(site: Path, page: Path, link: str, pages: dict[Path, _Collector]) -> str:
    if link.startswith(EXTERNAL):
        return ""
    parts = urlsplit(link)
    target = (page.parent / unquote(parts.path)).resolve() if parts.path else page.resolve()
    if not target.is_relative_to(site.resolve()):
        return "leaves the site"
    if not target.is_file():
        return "no such file"
    if parts.fragment:
        parsed = pages.get(target) or (_parse(target) if target.suffix == ".html" else None)
        if parsed is None or unquote(parts.fragment) not in parsed.ids:
            return "no such anchor"
    return ""
