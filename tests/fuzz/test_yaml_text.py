"""Mutated record text never escapes the loader: every outcome is a record or a finding."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.loader import parse_document
from tests.conftest import SHIPPED_RECORDS

TEXTS = sorted(p.read_text(encoding="utf-8") for p in SHIPPED_RECORDS.rglob("*.yaml"))[:40:4]
SIGNIFICANT = list(":-{}[]&*!|>'\"#%@`,?\t\n ") + [
    "\x85",
    "\ufeff",
    "\u2028",
    "- ",
    ": ",
    "<<: *a",
    "&a ",
    "!!python/object ",
    "\\",
    "~",
    ".inf",
    "0x1F",
    "1_000",
    "yes",
]
EXAMPLES = int(os.environ.get("KB_FUZZ_EXAMPLES", "150")) * 4  # cheap: no checking, loading only


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        piece = draw(st.sampled_from(SIGNIFICANT) | st.text(max_size=4))
        if action == "insert":
            text = text[:at] + piece + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        else:
            text = text[:at] + piece + text[at + len(piece) :]
    return text


@settings(max_examples=EXAMPLES, deadline=None)
@given(text=mutated())
def test_mutated_text_loads_or_gives_located_findings(text: str) -> None:
    data, findings = parse_document(text, "records/sources/fuzz.yaml")
    assert data is not None or findings, "a refused document must say why"
    # YAML breaks lines at CR, LF, NEL, LS and PS, and so do its positions
    lines = sum(text.count(mark) for mark in ("\n", "\r", "\x85", "\u2028", "\u2029")) + 2
    for finding in findings:
        assert finding.code.startswith("LD"), finding
        assert 1 <= finding.location.line <= lines, finding
        assert finding.location.col >= 1, finding
    if data is not None:
        assert isinstance(data, dict)
