"""ID004 over random id lists: one finding per later copy, at it, pointing back at the first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kb.model import KnowledgeBase, Record
from kb.rules import duplicate_item_id as rule

IDS = st.lists(st.sampled_from(["a", "b", "c", "d"]) | st.none(), max_size=12)
LISTS = st.sampled_from(sorted(rule.KEYED_LISTS))


def _item(name: str, key: str | None) -> dict[str, object]:
    fields = rule.KEYED_LISTS[name]
    item: dict[str, object] = {"text": "t"}
    if key is not None:
        item[fields[0]] = key
    return item


def _expected(keys: list[str | None]) -> list[tuple[int, int]]:
    """The plain definition: item j repeats the earliest i < j with the same (non-None) key."""
    pairs = []
    for j, key in enumerate(keys):
        earlier = [i for i in range(j) if key is not None and keys[i] == key]
        if earlier:
            pairs.append((earlier[0], j))
    return pairs


@given(IDS, LISTS)
def test_every_later_copy_is_one_finding_pointing_at_the_first(
    keys: list[str | None], name: str
) -> None:
    record = Record(
        "flops/x", "flop_class", "records/flops/x.yaml", {name: [_item(name, k) for k in keys]}
    )
    kb = KnowledgeBase(root="records")
    kb.add(record)
    findings = list(rule.check(kb))
    field = rule.KEYED_LISTS[name][0]
    got = [(f.related[0].pointer, f.location.pointer) for f in findings]
    want = [(f"/{name}/{i}/{field}", f"/{name}/{j}/{field}") for i, j in _expected(keys)]
    assert got == want
    assert all(f.code == "ID004" and f.severity.value == "error" for f in findings)
    assert all(
        repr(keys[j]) in f.message for f, (_, j) in zip(findings, _expected(keys), strict=True)
    )


@given(st.lists(st.tuples(st.sampled_from(["PV002", "EQ015"]), st.sampled_from(["", "/a"]))))
def test_waivers_repeat_only_when_code_and_pointer_both_do(pairs: list[tuple[str, str]]) -> None:
    waivers = [{"code": c, "reason": "r", **({"pointer": p} if p else {})} for c, p in pairs]
    kb = KnowledgeBase(root="records")
    kb.add(Record("hardware/x", "accelerator", "records/hardware/x.yaml", {"waivers": waivers}))
    later = [f.location.pointer for f in rule.check(kb)]
    assert later == [f"/waivers/{j}/code" for _, j in _expected(pairs)]  # type: ignore[arg-type]


def test_non_lists_and_non_mappings_are_left_to_the_schema() -> None:
    kb = KnowledgeBase(root="records")
    data = {"claims": "not a list", "derivations": [1, 1, "x", "x"], "workarounds": None}
    kb.add(Record("flops/x", "flop_class", "records/flops/x.yaml", data))
    assert list(rule.check(kb)) == []
