"""A rule's documented good example cites a source that exists (`kb explain` shows it)."""

from __future__ import annotations

import functools
import re

import pytest

from kb.rules import all_rules
from tests.conftest import SHIPPED_RECORDS, load_yaml

CITED = re.compile(r"\bsource: (sources/[a-z0-9][a-z0-9._-]*[a-z0-9])")


@functools.cache
def shipped_ids() -> frozenset[str]:
    """The ids of the shipped records, read once per test process (every example reads them)."""
    ids = set()
    for path in SHIPPED_RECORDS.rglob("*.yaml"):
        data = load_yaml(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            ids.add(data["id"])
    return frozenset(ids)


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
