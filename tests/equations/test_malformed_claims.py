"""A claim whose fields have the wrong YAML type is a finding in kb's words, never Python's.

Issue 34: `law: []` reached `law in LAWS` and came back as "EQ001 ... TypeError: unhashable
type: 'list'" from the claim checker's catch-all.
"""

from __future__ import annotations

import pytest

from tests.equations.helpers import flop, issues, knowledge_base

PYTHON_WORDS = ("TypeError", "unhashable", "object is not", "Traceback", "None")


@pytest.mark.parametrize(
    "fields",
    [
        "var: B, law: []",
        "var: B, law: {a: 1}",
        "var: B, law: 3",
        "var: B, law: power, exponent: [1]",
        "law: proportional",
        "var: [d], law: proportional",
        "var: {d: 1}, law: proportional",
    ],
)
def test_a_scaling_claim_of_the_wrong_shape_is_a_finding_in_kbs_words(fields: str) -> None:
    extra = f"""
claims:
  - {{id: s, kind: scaling, of: b_star, {fields}}}
"""
    found = issues(knowledge_base("/x", ("flops/x", flop(extra))))
    assert found, "a malformed claim must be a finding"
    for finding in found:
        assert not any(word in finding.message for word in PYTHON_WORDS), finding.message
