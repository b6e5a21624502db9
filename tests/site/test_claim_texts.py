"""The built site carries no claim whose text says a number kb does not compute or bind.

kb build publishes only what `kb validate` passes, and EQ027 holds every number
in every claim's text to the claim's computed value, the values it states and
the figures it binds. These tests build the shipped records and read the pages:
the stale texts of flops/tp-decode-allreduce-time are gone, their computed
values stand in their place, and the seed's "... and therefore halves B*"
(the TP crossover, which kb computes doubles) stands only in an erratum (a red
erratum claim row, an erratum's quotation, or the history).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from kb.api import validate
from tests.site.conftest import SEED_FLOP, load

STALE = ("16.34 ms", "21.17 ms", "factor 0.772", "1.30x", "x0.926", "17.65 ms", ": 3.8.")


def _claim_rows(html: str) -> dict[str, tuple[str, str]]:
    """Claim id -> (the row's class attribute, its text with the tags dropped)."""
    rows = re.findall(r'<tr id="claim-([^"]+)"([^>]*)>(.*?)</tr>', html, re.S)
    return {name: (attrs, re.sub(r"<[^>]+>", "", body)) for name, attrs, body in rows}


def test_the_shipped_records_have_no_claim_text_number_kb_does_not_compute(
    repo_copy: Path,
) -> None:
    _, findings = load(repo_copy / "records")
    assert [f for f in findings if f.code == "EQ027"] == []


def test_a_stale_claim_text_in_the_shipped_records_is_an_error(
    tmp_path: Path, shipped_stores: Path
) -> None:
    """EQ027 on a claim reads the claim's record and the records it binds, so per push the
    tree is that flop class's reference closure (tests/sample.py's), with KB_FULL=1 every
    shipped record; its stores seeded from one cold check of the shipped records."""
    from tests.site.sample_site import seeded_records

    roots = ("flops/tp-decode-allreduce-time",)
    records = seeded_records(tmp_path / "repo", shipped_stores, roots)
    path = records / "flops" / "tp-decode-allreduce-time.yaml"
    text = path.read_text(encoding="utf-8")
    current = "factor 0.742 (1.35 times the speed)."
    assert current in text
    path.write_text(text.replace(current, "factor 0.804 (1.24 times the speed)."), encoding="utf-8")
    found = [f for f in validate(records, remember=False).findings if f.code == "EQ027"]
    where = [
        (Path(f.location.path).name, "0.804" in f.message or "1.24" in f.message) for f in found
    ]
    assert where == [("tp-decode-allreduce-time.yaml", True)] * 2
    assert all("0.74198556" in f.message for f in found)  # names what kb computes


def test_the_tp_decode_page_shows_the_computed_values_not_the_stale_ones(
    built_site: Path,
) -> None:
    html = (built_site / "records" / "flops" / "tp-decode-allreduce-time.html").read_text()
    rows = _claim_rows(html)
    texts = " ".join(text for _, text in rows.values())
    assert [stale for stale in STALE if stale in texts] == []
    assert "21.034399" in rows["tp8-custom-70b-b64"][1]
    assert "28.348799" in rows["tp4-custom-70b-b64"][1]
    assert "22.344964" in rows["tp8-nccl-70b-b64"][1]
    assert "0.742 (1.35 times the speed)" in rows["tp4-to-tp8-custom"][1]


class _Contexts(HTMLParser):
    """For each text run holding `needle`: the open elements' (tag, class, id) around it."""

    def __init__(self, needle: str) -> None:
        super().__init__()
        self.needle, self.stack, self.hits = needle, [], []  # type: ignore[var-annotated]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("br", "img", "meta", "link", "input", "hr", "wbr", "source"):
            found = dict(attrs)
            self.stack.append((tag, found.get("class") or "", found.get("id") or ""))

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                break

    def handle_data(self, data: str) -> None:
        if self.needle in data:
            self.hits.append(list(self.stack))


def _in_an_erratum(stack: list[tuple[str, str, str]]) -> bool:
    classes = {word for _, cls, _ in stack for word in cls.split()}
    ids = {ident for _, _, ident in stack}
    quoted = any(tag == "q" for tag, _, _ in stack)
    history = "history" in ids or "changes" in classes  # a record's history, the latest changes
    return "claim-erratum" in classes or history or (quoted and "verbatim" in classes)


def test_halves_b_star_stands_only_in_an_erratum_on_every_page(built_site: Path) -> None:
    seen = 0
    for page in sorted(built_site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        if "halves" not in text:  # no text run of it can hold the words: no escape writes a
            continue  # letter as a character reference, so only these pages need parsing
        parser = _Contexts("therefore halves B*")  # the seed's words (the ridge's B* may halve)
        parser.feed(text)
        for stack in parser.hits:
            seen += 1
            assert _in_an_erratum(stack), (page.name, stack)
    assert seen  # the seed's words are still shown, as an erratum
    html = (built_site / "records" / f"{SEED_FLOP}.html").read_text()
    rows = _claim_rows(html)
    for name in ("reduce-scatter-all-gather-effect", "reduce-scatter-all-gather-seed-form"):
        attrs, text = rows[name]
        assert "halves B" not in text and "double" in text, (name, text)
    assert "claim-erratum" in rows["seed-rs-ag-halves-b-star"][0]
