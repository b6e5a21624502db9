"""Every internal link and #anchor of the built site resolves (and the checker can fail)."""

from __future__ import annotations

from pathlib import Path

from tests.site.linkcheck import broken_links


def test_every_internal_link_and_anchor_resolves(built_site: Path) -> None:
    """Every page, read statically: a failed request the crawl's sample could miss (a page's
    own link or image to a file that is not there) is found here on every page."""
    assert broken_links(built_site, cached=True) == []


def test_the_link_checker_reports_missing_files_and_anchors(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text(
        '<p id="here"><a href="b.html">b</a> <a href="a.html#here">ok</a> '
        '<a href="#gone">x</a> <a href="https://example.org/">ext</a></p>',
        encoding="utf-8",
    )
    problems = broken_links(tmp_path)
    assert problems == ["a.html: b.html (no such file)", "a.html: #gone (no such anchor)"]


def test_an_explorer_state_is_checked_as_state_not_as_an_anchor(tmp_path: Path) -> None:
    from tests.site.linkcheck import state_names

    assert {"model", "batch", "degrees"} <= set(state_names())  # read from explore.js
    (tmp_path / "explore" / "data").mkdir(parents=True)
    (tmp_path / "explore" / "data" / "m.js").write_text("", encoding="utf-8")
    (tmp_path / "explore" / "index.html").write_text(
        '<body data-template="explore.html"><p id="top">x</p></body>', encoding="utf-8"
    )
    (tmp_path / "a.html").write_text(
        '<a href="explore/index.html#model=models/m&batch=8">ok</a> '
        '<a href="explore/index.html#top">anchor</a> '
        '<a href="explore/index.html#model=models/gone">gone</a> '
        '<a href="explore/index.html#colour=red">bad</a>',
        encoding="utf-8",
    )
    assert broken_links(tmp_path) == [
        "a.html: explore/index.html#model=models/gone (no explorer data for models/gone)",
        "a.html: explore/index.html#colour=red (no such control: colour)",
    ]
