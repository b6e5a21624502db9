"""EQ027 (kb/rules/eq_claim_text_number_mismatch.py) on single claim texts.

Each case is the ring fixture's numeric claim (kb computes 38.35008 us from N = 8,
S = 1 MiB, alpha = 20 us, W = 100 GB/s) with one text; the rule reads the
equations stage's analysis, as in a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kb.equations import engine
from kb.model import KnowledgeBase, Record
from kb.rules import eq_claim_text_number_mismatch as rule

RING = """
symbols:
  N: {meaning: ranks, unit: "1"}
  S: {meaning: message size, unit: B}
  alpha: {meaning: latency per all-reduce, unit: us}
  W: {meaning: bus bandwidth, unit: GB/s}
  T: {meaning: all-reduce time, unit: us}
  r: {meaning: a ratio, unit: "1"}
equations:
  t_ring: {expr: "T = alpha + 2*(N - 1)/N*S/W"}
  share: {expr: "r = alpha/(alpha + 2*(N - 1)/N*S/W)"}
claims:
  - id: t
    kind: numeric
    of: t_ring
    bind:
      N: {value: 8, unit: "1"}
      S: {value: 1, unit: MiB}
      alpha: {value: 20, unit: us}
      W: {value: 100, unit: GB/s}
    expect: {value: 38.35, unit: us, round: 0.01}
  - id: share
    kind: numeric
    of: share
    bind:
      N: {value: 8, unit: "1"}
      S: {value: 1, unit: MiB}
      alpha: {value: 20, unit: us}
      W: {value: 100, unit: GB/s}
    expect: {value: 0.5215, unit: "1", round: 0.0001}
"""


def _findings(text: Any, claim: int = 0, **extra: Any) -> list[str]:
    data = yaml.safe_load(RING)
    data["claims"][claim].update({"text": text, **extra})
    data.update({"kind": "flop_class", "id": "flops/ring"})
    kb = KnowledgeBase("/x")
    kb.add(Record("flops/ring", "flop_class", "records/flops/ring.yaml", data))
    engine.analyse(kb, use_cache=False)
    return [f.message.split(": its text says ")[1].split(" ")[0] for f in rule.check(kb)]


CASES = [
    ("8 ranks: 38.35 us", 0, []),
    ("8 ranks: 38.4 us, about 38 us, 0.03835 ms", 0, []),  # at the precision written
    ("8 ranks: 38.36 us", 0, ["38.36"]),
    ("a 1 MiB message is 1,048,576 B, 1.048576 MB", 0, []),  # the binding, converted
    ("a 1 MiB message at 100 GB/s, i.e. 0.1 TB/s or 100,000 MB/s", 0, []),
    ("at 100 GiB/s", 0, ["100"]),  # another unit of the same dimension: another value
    ("alpha is 20 ms", 0, ["20"]),
    ("latency is 52% of the time", 1, []),  # a ratio as a percentage
    ("latency is 0.52 of the time, 1.92x the rest", 1, []),  # and inverted
    ("latency is 0.53 of the time", 1, ["0.53"]),
    ("latency is x0.5215 of it", 1, []),
    ("latency is x0.6 of it", 1, ["0.6"]),
    ("in 1/8 of the ranks", 0, ["1/8"]),  # a fraction is one number
    ('the source says "16.34 us"; kb computes 38.35 us', 0, []),  # a quotation
    ("{claim:t} per all-reduce, `2*(N - 1)/N` of the payload", 0, []),  # template, code
    ("H100, TP8, Llama 3.1 70B, x16 lanes, 2026-12-06", 0, []),  # names, not numbers
    ('the source says "x0.6" and `x0.7`; kb x0.5215', 1, []),  # a factor quoted, in code
    ("x0.6 of it, then 20 us and 1/8 and 38.36 us", 0, ["0.6", "1/8", "38.36"]),
]


@pytest.mark.parametrize(("text", "claim", "flagged"), CASES)
def test_each_number_agrees_with_a_value_of_the_claim(
    text: str, claim: int, flagged: list[str]
) -> None:
    assert _findings(text, claim) == flagged


def test_a_text_that_is_not_a_string_or_a_claim_kb_could_not_compute_is_left_alone() -> None:
    assert _findings(["8 ranks: 16.34 us"]) == []  # the schema reports a list (SC001)
    unbound = {"bind": {"N": {"value": 8, "unit": "1"}}}  # S, alpha, W unbound: invalid
    assert _findings("16.34 us", **unbound) == []


def test_the_message_names_both_numbers() -> None:
    data = yaml.safe_load(RING)
    data["claims"][0]["text"] = "8 ranks: 16.34 us"
    data.update({"kind": "flop_class", "id": "flops/ring"})
    kb = KnowledgeBase("/x")
    kb.add(Record("flops/ring", "flop_class", "records/flops/ring.yaml", data))
    engine.analyse(kb, use_cache=False)
    (finding,) = rule.check(kb)
    assert finding.location.pointer == "/claims/0/text"
    assert "its text says 16.34 but kb computes 38.350080" in finding.message
    assert finding.severity.value == "error"


def _eager(kb: KnowledgeBase, claim: Any, item: Any, text: str) -> list[tuple[int, str]]:
    """The plain definition `_verdict` is held to: every value (inputs too) made first."""
    from kb.prose.scan import Number, bare_numbers, protected

    spans = protected(text)
    glued = [
        Number(m.start(1), m.end(1), m.group(1))
        for m in rule._TIMES.finditer(text)
        if not any(lo <= m.start() < hi for lo, hi, _ in spans)
    ]
    numbers = sorted([*bare_numbers(text), *glued], key=lambda number: number.start)
    if not numbers:
        return []
    results = rule._results(item)
    values = results + rule._inverted(results) + rule._stated(claim, item) + rule._inputs(kb, claim)
    return [
        (start, rule._message(claim, written, item, values))
        for start, written, value, half, end in rule._written(text, numbers)
        if not rule._agrees(value, half, rule._unit_after(text, end), values, claim)
    ]


def _lazy_and_eager(kb: KnowledgeBase) -> int:
    """Hold `_verdict` (its values made lazily; no key for a text without numbers) to `_eager`.

    On every claim text of `kb`; returns how many texts were compared.
    """
    analysis = engine.analyse(kb, use_cache=False)
    compared = 0
    for record in kb:
        result = analysis.results.get(record.id)
        items = {i.pointer: i for i in result.items} if result is not None else {}
        for index, claim in enumerate(record.data.get("claims") or []):
            item = items.get(f"/claims/{index}")
            if item is not None and isinstance(claim.get("text"), str):
                text = claim["text"]
                assert list(rule._verdict(kb, claim, item, text)) == _eager(
                    kb, claim, item, text
                ), text
                compared += 1
    return compared


def test_values_made_only_when_needed_give_the_eager_verdict_on_every_case() -> None:
    """Each case's text (agreeing with the result, an input, nothing) both ways."""
    kb = KnowledgeBase("/x")
    for number, (text, claim, _) in enumerate(CASES):
        data = yaml.safe_load(RING)
        data["claims"][claim]["text"] = text
        data.update({"kind": "flop_class", "id": f"flops/ring-{number}"})
        path = f"records/flops/ring-{number}.yaml"
        kb.add(Record(f"flops/ring-{number}", "flop_class", path, data))
    assert _lazy_and_eager(kb) == len(CASES)


def test_values_made_only_when_needed_give_the_eager_verdict_on_the_sample(
    tmp_path: Path,
) -> None:
    """The sample's claims per push (tests/sample.py), every shipped claim with KB_FULL=1."""
    from kb.api import open_kb
    from tests.conftest import SHIPPED_RECORDS
    from tests.sample import full, sample_copy

    root = SHIPPED_RECORDS if full() else sample_copy(tmp_path / "records")
    assert _lazy_and_eager(open_kb(root)) >= 5
