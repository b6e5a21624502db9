"""Code spans in prose: formulas as inline MathML, other spans as <code>, no backtick shown.

Unit cases on kb.sitegen.inline_code, then the built site: no page's visible
text (script, style and MathML source excluded) holds a backtick, except a lone
one inside a verbatim quotation (a source's own unmatched backtick, kept as
quoted).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from kb.sitegen import inline_code

HIDDEN = ("script", "style", "title", "math", "desc")
VOID = ("br", "img", "meta", "link", "input", "hr", "wbr", "col", "source", "path", "line")


class _Visible(HTMLParser):
    """Visible text runs of a page, each with whether it sits in a verbatim quotation."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, str]] = []
        self.runs: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.stack.append((tag, dict(attrs).get("class") or ""))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if any(tag in HIDDEN for tag, _ in self.stack):
            return
        quoted = any(tag == "q" and "verbatim" in cls for tag, cls in self.stack)
        self.runs.append((data, quoted))


def test_a_formula_is_mathml_and_keeps_its_source() -> None:
    html = inline_code.render("converges when `q < 1` and `B*(1 - alpha/alpha_max)` holds")
    assert "`" not in html
    assert html.count("<math") == 2
    assert 'alttext="q &lt; 1"' in html
    assert "<mo>&lt;</mo>" in html
    assert "<mi>\u03b1</mi>" in html  # alpha printed as the Greek letter


def test_a_relation_prints_its_operator() -> None:
    html = inline_code.render("`x <= 2*y`")
    assert "<mo>\u2264</mo>" in html and "<mfrac>" not in html


def test_a_starred_name_is_a_starred_symbol() -> None:
    html = inline_code.render("`B* = P_layer*W/(4*(N-1)*d*BW_hbm)` and `B*(1 - a)`")
    assert html.count("<math") == 2 and "B_star" not in html
    assert "<msup><mi>B</mi><mo>*</mo></msup>" in html  # the first: B* as a symbol
    assert 'alttext="B* = P_layer*W/(4*(N-1)*d*BW_hbm)"' in html


def test_a_power_written_with_a_caret_is_a_superscript() -> None:
    assert "<msup>" in inline_code.render("`f = 1 - (1 - k/E)^B`")


def test_a_word_a_field_or_a_command_is_code() -> None:
    for source in ("overlap", "state_shards: 1", "kb ledger placements/x --set batch=256", "7"):
        html = inline_code.render(f"see `{source}` here")
        assert html.startswith('see <code class="inline-code">') and "<math" not in html, source


def test_a_span_wrapping_a_line_is_one_formula() -> None:
    html = inline_code.render("state is `state_bytes / state_shards +\nreplicated` per device")
    assert "`" not in html and "<mfrac>" in html


def test_everything_is_escaped() -> None:
    html = inline_code.render("<b>x</b> `<script>alert(1)</script>` & `a<b>c`")
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;" in html and "&amp;" in html


def test_a_verbatim_quotation_gets_code_never_maths() -> None:
    html = inline_code.render("run `a = b*c` now", maths=False)
    assert html == 'run <code class="inline-code">a = b*c</code> now'


def test_a_lone_backtick_stays_text() -> None:
    assert inline_code.render("a ` b") == "a ` b"
    assert inline_code.plain("x `y` z `") == "x y z `"


# A backtick in a page's source: itself or a character reference to it (decimal, hex, named).
BACKTICK = re.compile(r"`|&(?:#0*96(?!\d)|#x0*60(?![0-9a-f])|grave;)", re.IGNORECASE)


def test_no_page_shows_a_backtick(built_site: Path) -> None:
    shown = []
    for page in sorted(built_site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        if not BACKTICK.search(text):  # no text run of it can show one: not parsed
            continue
        parser = _Visible()
        parser.feed(text)
        for text, quoted in parser.runs:
            if "`" in text and not (quoted and text.count("`") % 2 == 1):
                shown.append(f"{page.relative_to(built_site)}: {text.strip()[:80]!r}")
    assert shown == []


def test_the_search_index_text_has_no_code_backticks(built_site: Path) -> None:
    index = (built_site / "search-index.js").read_text(encoding="utf-8")
    assert "`q < 1`" not in index and "`overlap`" not in index
