"""kb.yamladvice: any broken YAML gets one LD004 inside the file, never a traceback."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.loader import parse_document
from kb.rules import by_code

RECORD = (
    'kind: source\nid: sources/doc\ntitle: "A document"\nversion: 1\nnotes: {a: 1, b: [2, 3]}\n'
)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, len(RECORD)),
    st.text(alphabet="\t :{}[]\"'#-\n|>&*!%@`ab1", min_size=1, max_size=4),
)
def test_any_broken_yaml_is_one_located_finding(at: int, inserted: str) -> None:
    text = RECORD[:at] + inserted + RECORD[at:]
    data, findings = parse_document(text, "records/sources/doc.yaml")
    syntax = [f for f in findings if f.code == "LD004"]
    if data is None and syntax:
        assert len(syntax) == 1
        finding = syntax[0]
        assert 1 <= finding.location.line <= text.count("\n") + 1
        # a problem with no hint of its own takes its rule module's HINT (kb.rules)
        assert finding.message and (finding.hint or by_code(finding.code).HINT)


def test_tab_is_named() -> None:
    _, findings = parse_document("kind: source\nnotes:\n\t- a\n", "x.yaml")
    assert findings[0].message.startswith("tab character in indentation at 3:1")
