"""A rule's documented good example cites a source that exists (`kb explain` shows it)."""

from __future__ import annotations

import re

import pytest
import yaml

from kb.rules import all_rules
from tests.conftest import SHIPPED_RECORDS

CITED = re.compile(r"\bsource: (sources/[a-z0-9][a-z0-9._-]*[a-z0-9])")


def shipped_ids() -> set[str]:
    ids = set()
    for path in SHIPPED_RECORDS.rglob("*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            ids.add(data["id"])
    return ids


GOOD = [
    (rule.CODE, (rule.__doc__ or "").split("Good:", 1)[1])
    for rule in all_rules()
    if "Good:" in (rule.__doc__ or "")
]


@pytest.mark.parametrize(("code", "good"), GOOD, ids=[code for code, _ in GOOD])
def test_a_good_example_cites_a_shipped_source(code: str, good: str) -> None:
    missing = sorted(set(CITED.findall(good)) - shipped_ids())
    assert not missing, f"{code}'s good example cites {missing}: no such record is shipped"


def test_the_examples_that_cite_a_source_are_checked() -> None:
    assert {"RF001", "PV001", "PV002"} <= {code for code, good in GOOD if CITED.search(good)}
