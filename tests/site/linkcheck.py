"""A stdlib checker for a static site's internal links and #anchors (no network).

Each page's ids and links are read by tests/site/sample_pages.py's reader (one read of
the built site per process serves the crawl's sample and this check). A link into the
placement explorer whose fragment is `name=value&...` is the explorer's state, not an
anchor (static/explore.js reads it into its controls): each name must be one of the
controls explore.js reads, and the model one whose data file the site has.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.site.sample_pages import PageFacts, cached_facts, site_facts

EXTERNAL = ("http:", "https:", "mailto:", "data:", "javascript:")
STATE_TEMPLATES = ("explore.html",)  # pages whose fragment is the page's state


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
        if parsed is not None and parsed.template in STATE_TEMPLATES and "=" in parts.fragment:
            return _state_problem(unquote(parts.fragment), files)
        if parsed is None or unquote(parts.fragment) not in parsed.ids:
            return "no such anchor"
    return ""


def _state_problem(fragment: str, files: set[str]) -> str:
    """What is wrong with an explorer state (`model=...&batch=...`), or ""."""
    from kb.sitegen import urls

    state = dict(part.partition("=")[::2] for part in fragment.split("&"))
    unknown = sorted(set(state) - set(state_names()))
    if unknown:
        return f"no such control: {', '.join(unknown)}"
    model = state.get("model")
    if model is not None and urls.explore_data(model) not in files:
        return f"no explorer data for {model}"
    return ""


@functools.cache
def state_names() -> tuple[str, ...]:
    """The controls the explorer's script reads from the fragment (its NAMES)."""
    from kb.resources import theme_dir

    text = (theme_dir() / "static" / "explore.js").read_text(encoding="utf-8")
    found = re.search(r"var NAMES = \[([^\]]*)\]", text)
    assert found is not None, "explore.js names no controls"
    return tuple(re.findall(r'"([a-z]+)"', found.group(1)))
