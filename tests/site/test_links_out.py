"""Links out: source URLs are links (http/https only, rel="noopener noreferrer"), anything
else stays escaped text; each source page lists the records that cite it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kb.sitegen import urls
from kb.sitegen.build import build
from tests.ledger.ledger_fixtures import SRC, common, fixture_records, write_tree

HOSTILE = {
    "sources/js-url": "javascript:alert(1)",
    "sources/data-url": "data:text/html,<script>alert(2)</script>",
    "sources/quote-url": 'https://example.org/"><script>alert(3)</script>',
    "sources/file-url": "file:///etc/passwd",
    "sources/spaced-url": "https://example.org/a b",
}


PROSE_ID = "sources/prose-urls"
PROSE = {
    "summary": "Summarised from https://example.org/s, not from JAVASCRIPT://example.org/x.",
    "notes": (
        "See https://example.org/a?b=1&c=2. Also (https://example.org/paren) and "
        "javascript:alert(4) and data:text/html,<script>alert(5)</script> and "
        "https://example.org/'onmouseover='alert(6) and http://example.org/<b>bold</b>; the "
        'source says "tables at https://example.org/q (page 3)" verbatim.'
    ),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = fixture_records()
    for record_id, url in HOSTILE.items():
        records[record_id] = common(record_id, "source") | {"url": url, "tier": "T4"}
    records[PROSE_ID] = common(PROSE_ID, "source") | {"tier": "T4", **PROSE}
    from kb.api import open_kb, validate

    root = tmp_path_factory.mktemp("links")
    tree = write_tree(root, records) / "records"
    result = validate(tree, remember=False)
    out = root / "_site"
    build(
        open_kb(tree, checked=result),
        out,
        findings=[f for f in result.findings if f.severity.value != "error"],
    )
    return out


@pytest.mark.parametrize(
    ("text", "href"),
    [
        ("https://arxiv.org/abs/2311.09431", "https://arxiv.org/abs/2311.09431"),
        ("HTTP://Example.org/x?a=1&b=2#f", "HTTP://Example.org/x?a=1&b=2#f"),
        (" https://example.org/ ", "https://example.org/"),
        ("javascript:alert(1)", None),
        ("JaVaScRiPt://example.org/%0aalert(1)", None),
        ("data:text/html,x", None),
        ("ftp://example.org/", None),
        ("//example.org/", None),
        ("https:///nohost", None),
        ('https://example.org/"onmouseover="x', None),
        ("https://example.org/<b>", None),
        ("https://example.org/\nx", None),
        ("https://nvbugs/5398180][feat", None),  # a bracket in the path: not a valid href
        ("https://example.org/a?q=[1]", None),
        ("https://[::1]/x", "https://[::1]/x"),
        ("https://[::1/x", None),
    ],
)
def test_only_plain_http_urls_are_link_targets(text: str, href: str | None) -> None:
    assert urls.external(text) == href


@given(st.text(max_size=60))
def test_a_link_target_never_carries_markup_or_another_scheme(text: str) -> None:
    href = urls.external(text)
    if href is not None:
        assert href.lower().startswith(("http://", "https://"))
        assert not set(href) & set("<>\"'` \t\r\n")
        assert not set(href.split("/", 3)[-1] if href.count("/") >= 3 else "") & set("[]")


def test_a_source_url_is_a_link_out_with_noopener(site: Path) -> None:
    html = (site / f"records/{SRC}.html").read_text(encoding="utf-8")
    links = re.findall(r'<a class="external" href="([^"]*)" rel="noopener noreferrer">', html)
    assert links and set(links) == {"https://example.invalid/"}
    assert len(links) == 2  # the header's "Read the source" and the url field


@pytest.mark.parametrize("record_id", sorted(HOSTILE))
def test_a_hostile_url_stays_escaped_text(site: Path, record_id: str) -> None:
    html = (site / f"records/{record_id}.html").read_text(encoding="utf-8")
    assert 'class="external"' not in html and "Read the source" not in html
    assert "<script>alert" not in html
    hrefs = re.findall(r'<a [^>]*href="([^"]*)"', html)
    assert not [h for h in hrefs if h.lower().startswith(("javascript:", "data:", "file:"))]
    assert not [h for h in hrefs if "example.org" in h]


def test_a_source_page_lists_the_records_citing_it(site: Path) -> None:
    html = (site / f"records/{SRC}.html").read_text(encoding="utf-8")
    section = html.split('<section id="used-by"', 1)[1].split("</section>", 1)[0]
    assert '<h2 id="used-by-h">Cited by</h2>' in section
    cited = set(re.findall(r'<li><a href="\.\./\.\./records/([^"]+)\.html"', section))
    assert {"receipts/fixture-ar", "interconnects/fixture-link"} <= cited, cited
    count = len(re.findall(r"<li><a ", section))
    assert f"cited by {count} records" in html


def test_urls_in_prose_summaries_notes_and_quotes_are_links_out(site: Path) -> None:
    html = (site / f"records/{PROSE_ID}.html").read_text(encoding="utf-8")
    links = re.findall(r'<a class="external" href="([^"]*)" rel="noopener noreferrer">', html)
    assert set(links) == {
        "https://example.org/s",  # the summary (sentence punctuation is not the URL's)
        "https://example.org/a?b=1&amp;c=2",  # the notes, escaped in the attribute
        "https://example.org/paren",  # the bracket it did not open is the sentence's
        "https://example.org/",  # stops at the quote: the rest is text
        "http://example.org/",  # stops at the angle bracket
        "https://example.org/q",  # inside a verbatim quotation, which stays whole
    }, links
    assert re.search(r'<q class="verbatim">&#34;tables at <a class="external" '
                     r'href="https://example.org/q" rel="noopener noreferrer">'
                     r"https://example.org/q</a> \(page 3\)&#34;</q>", html)  # fmt: skip


def test_hostile_urls_in_prose_stay_escaped_text(site: Path) -> None:
    html = (site / f"records/{PROSE_ID}.html").read_text(encoding="utf-8")
    hrefs = re.findall(r'<a [^>]*href="([^"]*)"', html)
    assert not [h for h in hrefs if h.lower().startswith(("javascript:", "data:", "file:"))]
    assert "<script>alert" not in html and "<b>bold" not in html
    assert not re.search(r"<[^>]*onmouseover", html)  # never inside a tag
    assert "javascript:alert(4)" in html and "JAVASCRIPT://example.org/x" in html  # as text
    assert "data:text/html,&lt;script&gt;alert(5)&lt;/script&gt;" in html


@given(st.text(alphabet=st.sampled_from(list("ab:/.\"'<> ()&#?=h tpsjv")), max_size=80))
def test_url_parts_keep_the_text_and_link_only_http(text: str) -> None:
    from kb.sitegen.prose_view import url_parts

    parts = url_parts(text)
    assert "".join(p["text"] for p in parts) == text  # nothing lost, nothing added
    for part in parts:
        if part["kind"] == "url":
            assert part["href"] == urls.external(part["text"]) and part["href"]
