"""A stdlib checker for a static site's internal links and #anchors (no network).

Each page's ids and links are read by tests/site/sample_pages.py's reader (one read of
the built site per process serves the crawl's sample and this check).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.site.sample_pages import PageFacts, cached_facts, site_facts

EXTERNAL = ("http:", "https:", "mailto:", "data:", "javascript:")


def broken_links(site: Path, *, cached: bool = False) -> list[str]:
    """Every internal link or anchor of every HTML page that does not resolve.

    `cached`: the site's pages as read once per process (a site the tests only read).
    Paths are resolved as strings against the site's files (a built site has no symlinks).
    """
    facts = cached_facts(site) if cached else site_facts(site)
    pages = {fact.path: fact for fact in facts}
    files = {
        (Path(folder) / name).relative_to(site).as_posix()
        for folder, _, names in os.walk(site)
        for name in names
    }
    problems = []
    for fact in facts:
        folder = posixpath.dirname(fact.path)
        for link in fact.links:
            problem = _check(fact.path, folder, link, pages, files)
            if problem:
                problems.append(f"{fact.path}: {link} ({problem})")
    return problems


def _check(page: str, folder: str, link: str, pages: dict[str, PageFacts], files: set[str]) -> str:
    if link.startswith(EXTERNAL):
        return ""
    parts = urlsplit(link)
    path = unquote(parts.path)
    target = posixpath.normpath(posixpath.join(folder, path)) if path else page
    if target == ".." or target.startswith("../") or posixpath.isabs(target):
        return "leaves the site"
    if target not in files:
        return "no such file"
    if parts.fragment:
        parsed = pages.get(target)
        if parsed is None or unquote(parts.fragment) not in parsed.ids:
            return "no such anchor"
    return ""
