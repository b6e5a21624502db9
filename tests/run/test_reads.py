"""Every rule's READS holds: files outside a record's declared inputs cannot change its findings.

kb.incremental re-checks a file on a knowledge base of just its declared inputs
(kb.reads.DependencyGraph.inputs), so a declaration that is too small would make a
partial run differ from a full one. Here each rule is run on trees where every file
outside the focus file's declared inputs (for that rule's READS) is

- removed (not for "all-ids": its messages may name any id, so ids must stay), and
- replaced by a stub of the same name (a mapping that names nothing),

and the rule's findings on the focus file must be exactly those of the whole tree.
The focus files are every file a rule's failing case reports on, and, in the
shipped records, the files where each READS value's rules report most.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb import reads
from kb.api import Result, open_kb, validate
from kb.equations.engine import analysed
from kb.findings import Finding
from kb.model import KINDS, Reference
from kb.reads import DependencyGraph, file_nodes, rule_reads
from kb.rules import all_rules
from kb.run import StageNotRun
from kb.snapshot import FileState
from tests.conftest import SHIPPED_RECORDS, write_tree
from tests.rules.test_rule_cases import case_files
from tests.warm import seed

READS_OF = {rule.CODE: rule_reads(rule) for rule in all_rules()}
STUB = "kind: source\ntitle: a stub that names nothing\n"


def test_every_rule_declares_what_it_reads() -> None:
    for rule in all_rules():
        assert rule_reads(rule) in reads.READS_VALUES
        assert not hasattr(rule, "LOCAL"), f"{rule.CODE}: LOCAL is READS = 'record' now"


def test_reads_sits_just_before_code_in_every_rule_module() -> None:
    for rule in all_rules():
        lines = Path(rule.__file__).read_text(encoding="utf-8").splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("CODE = "))
        assert lines[at - 1] == f'READS = "{rule_reads(rule)}"', rule.CODE


def test_only_the_reference_rules_read_every_id() -> None:
    """RF001 (does the id exist, "did you mean") and RF002 (its kind: the id's folder)."""
    assert reads.codes_reading("all-ids") == {"RF001", "RF002"}


@pytest.fixture(scope="module")
def shipped_run(
    tmp_path_factory: pytest.TempPathFactory, shipped_stores: Path
) -> tuple[Path, Result]:
    """A copy of the shipped records at `work/records`, its `.kb-cache` holding the stores one
    cold check left (tests/warm.py: the whole run is not the subject), and one full check of
    it made at `work` (paths print as records/...). Made once for the tests that read the
    whole tree's findings or what its check hands over; no test changes the copy."""
    work = tmp_path_factory.mktemp("shipped-run")
    shutil.copytree(SHIPPED_RECORDS, work / "records")
    seed(shipped_stores, work / ".kb-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("KB_CACHE_DIR", raising=False)
        patch.chdir(work)
        return work, validate(Path("records"), remember=False)


def at_work(shipped_run: tuple[Path, Result], monkeypatch: pytest.MonkeyPatch) -> Result:
    """`shipped_run`'s check, with the working directory and cache folder it ran with."""
    work, whole = shipped_run
    monkeypatch.delenv("KB_CACHE_DIR", raising=False)
    monkeypatch.chdir(work)
    return whole


def test_a_rule_reads_the_equations_analysis_exactly_when_it_declares_it(
    shipped_run: tuple[Path, Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """kb.checker runs the rules not declaring "equations" beside the equations stage.

    So a rule that reads the analysis (kb.equations.engine.analysed) must declare it, and one
    that declares it must read it: run without the analysis, the first kind stops
    (StageNotRun), the second does not. The check that gives the schema verdict is
    `shipped_run`'s: not the subject.
    """
    kb = open_kb(Path("records"), checked=at_work(shipped_run, monkeypatch))
    kb.run.known_codes = frozenset(READS_OF)
    assert analysed(kb) is None
    read_it = set()
    for rule in all_rules():
        if READS_OF[rule.CODE] == "findings":
            continue  # the waiver rules run after every stage (they read which waivers were used)
        try:
            list(rule.check(kb))
        except StageNotRun:
            read_it.add(rule.CODE)
    assert read_it == reads.codes_reading("equations")
    assert len(read_it) >= 20


def rows(findings: list[Finding], path: str, codes: set[str]) -> list[tuple[Any, ...]]:
    return sorted(
        (f.code, f.location, f.message, f.hint, f.related)
        for f in findings
        if f.location.path == path and f.code in codes
    )


def checked(root: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> list[Finding]:
    with monkeypatch.context() as patch:
        patch.setenv("KB_CACHE_DIR", str(cache))
        return validate(root, remember=False).findings


def variants(value: str) -> Iterator[str]:
    if value != "all-ids":
        yield "removed"
    yield "stubbed"


def holds(
    root: Path,
    work: Path,
    focus_files: dict[str, set[str]],
    monkeypatch: pytest.MonkeyPatch,
    whole: Result | None = None,
) -> int:
    """Check each {focus path: READS values}; the number of (focus, value, variant) tried.

    Paths are display paths relative to `work` (the working directory), `root` is
    `work / "records"`. `whole`: the caller's `validate(Path("records"), remember=False)`
    at `work` of this very tree, if it made one (made here when not given).
    """
    monkeypatch.chdir(work)
    whole = validate(Path("records"), remember=False) if whole is None else whole
    graph = DependencyGraph(file_nodes(open_kb(Path("records"))))
    tried = 0
    for focus, values in sorted(focus_files.items()):
        for value in sorted(values):
            codes = {code for code, declared in READS_OF.items() if declared == value}
            expected = rows(whole.findings, focus, codes)
            keep = graph.inputs(focus, {value})
            for variant in variants(value):
                copy = work.parent / f"{work.name}-{tried}"
                shutil.copytree(work / "records", copy / "records", symlinks=True)
                for name in graph.files:
                    if name not in keep:
                        target = copy / name
                        target.unlink()
                        if variant == "stubbed":
                            target.write_text(STUB)
                monkeypatch.chdir(copy)
                found = checked(Path("records"), copy / ".cache", monkeypatch)
                assert rows(found, focus, codes) == expected, (focus, value, variant)
                monkeypatch.chdir(work)
                shutil.rmtree(copy)
                tried += 1
    return tried


def test_shipped_records_hold_their_declarations(
    shipped_run: tuple[Path, Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    work = shipped_run[0]
    whole = at_work(shipped_run, monkeypatch)  # the whole tree's findings (not the subject)
    by_value: dict[str, dict[str, int]] = {}
    for finding in whole.findings:
        counts = by_value.setdefault(READS_OF[finding.code], {})
        counts[finding.location.path] = counts.get(finding.location.path, 0) + 1
    focus: dict[str, set[str]] = {}
    for value, counts in by_value.items():
        if value != "base":
            busiest = max(sorted(counts), key=lambda path: counts[path])
            focus.setdefault(busiest, set()).add(value)
    ledger = sorted(
        r.path for r in open_kb(Path("records")).of_kind("placement")
    )  # the ledger rules' kind
    focus.setdefault(ledger[0], set()).update({"ledger", "bound", "claimants"})
    tried = holds(work / "records", work, focus, monkeypatch, whole)  # its own check above
    print(f"shipped records: {tried} declarations held")
    assert tried >= 4


def failing_cases() -> Iterator[Any]:
    for module, doc in case_files().items():
        for name, case in (doc.get("cases") or {}).items():
            codes = {e["code"] for e in case.get("expect") or []}
            if case.get("base") is None and codes:
                yield pytest.param(case, codes, id=f"{module}::{name}")


@pytest.mark.parametrize(("case", "codes"), list(failing_cases()))
def test_rule_cases_hold_their_declarations(
    case: dict[str, Any], codes: set[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "case"
    write_tree(work / "records", case["files"])
    for name, value in (case.get("env") or {}).items():  # as tests/rules/test_rule_cases.py
        monkeypatch.setenv(name, str(value))  # a case's KB_* settings (EQ029: a tiny guard)
    monkeypatch.chdir(work)
    whole = validate(Path("records"), remember=False)
    assert {f.code for f in whole.findings} >= codes  # the case's finding, under its settings
    nodes = file_nodes(open_kb(Path("records")))
    focus: dict[str, set[str]] = {}
    for finding in whole.findings:
        value = READS_OF[finding.code]
        if value != "base" and finding.location.path in nodes:
            focus.setdefault(finding.location.path, set()).add(value)
    assert holds(work / "records", work, focus, monkeypatch, whole) > 0  # its check above


def test_a_too_small_declaration_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The experiment can fail: RF001 declared "record" would lose its finding's target."""
    work = tmp_path / "case"
    write_tree(
        work / "records",
        {
            "sources/doc.yaml": "kind: source\nid: sources/doc\ntitle: A\n",
            "interconnects/link.yaml": (
                "kind: interconnect\nid: interconnects/link\nbandwidth:\n"
                "  per_link: {value: 1, unit: GB/s, basis: derived, source: sources/doc}\n"
            ),
        },
    )
    monkeypatch.setitem(READS_OF, "RF001", "record")
    monkeypatch.setitem(READS_OF, "RF002", "record")
    with pytest.raises(AssertionError):
        holds(
            work / "records",
            work,
            {"records/interconnects/link.yaml": {"record"}},
            monkeypatch,
        )


def case_tree(work: Path, module: str, name: str) -> None:
    write_tree(work / "records", case_files()[module]["cases"][name]["files"])


def test_a_binding_read_declared_as_the_record_alone_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EQ010 reads the field a binding names: declared "record", the bound file goes."""
    work = tmp_path / "case"
    case_tree(work, "eq_binding_unresolved", "no_such_field")
    focus = {"records/flops/x.yaml": {"bound"}}
    assert holds(work / "records", work, focus, monkeypatch) == 2  # as declared: held
    monkeypatch.setitem(READS_OF, "EQ010", "record")
    with pytest.raises(AssertionError):
        holds(work / "records", work, {"records/flops/x.yaml": {"record"}}, monkeypatch)


def test_a_plain_reference_read_declared_as_bound_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LG007 reads the placement a proposal names (no `#`): "bound" does not reach it."""
    work = tmp_path / "case"
    case_tree(work, "proposal_candidate_unknown", "candidate_not_in_placement")
    proposal = "records/proposals/q.yaml"
    assert holds(work / "records", work, {proposal: {"ledger"}}, monkeypatch) == 2
    monkeypatch.setitem(READS_OF, "LG007", "bound")
    with pytest.raises(AssertionError):
        holds(work / "records", work, {proposal: {"bound"}}, monkeypatch)


def test_a_kind_read_through_the_id_alone_is_held_and_a_content_read_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RF002 needs only the ids (a kind is the id's folder); EQ010 declared so is caught."""
    work = tmp_path / "case"
    write_tree(
        work / "records",
        {
            "sources/doc.yaml": "kind: source\nid: sources/doc\ntitle: A\n",
            "hardware/gpu.yaml": (
                "kind: accelerator\nid: hardware/gpu\nlinks:\n  - interconnect: sources/doc\n"
            ),
        },
    )
    focus = {"records/hardware/gpu.yaml": {"all-ids"}}
    assert holds(work / "records", work, focus, monkeypatch) == 1  # stubbed: ids kept
    case = tmp_path / "binding"
    case_tree(case, "eq_binding_unresolved", "no_such_field")
    monkeypatch.setitem(READS_OF, "EQ010", "all-ids")
    with pytest.raises(AssertionError):
        holds(case / "records", case, {"records/flops/x.yaml": {"all-ids"}}, monkeypatch)


def read_graph() -> DependencyGraph:
    """A flop class binding an accelerator and citing a source; a placement's chain."""
    nodes = {
        "flops/f": ("flop_class", ("hardware/a", "sources/s"), ("hardware/a",)),
        "hardware/a": ("accelerator", ("interconnects/l", "sources/s"), ()),
        "interconnects/l": ("interconnect", ("sources/t",), ()),
        "sources/s": ("source", (), ()),
        "sources/t": ("source", (), ()),
        "placements/p": ("placement", ("hardware/a",), ()),
        "receipts/r": ("receipt", ("interconnects/l",), ()),
    }
    return DependencyGraph(
        {f"records/{i}.yaml": FileState(i, i, k, t, b) for i, (k, t, b) in nodes.items()}
    )


def test_bound_reads_one_step_and_a_ledger_reads_it_all_only_where_there_is_one() -> None:
    graph = read_graph()
    path = "records/{}.yaml".format
    flop, placement = path("flops/f"), path("placements/p")
    assert graph.inputs(flop, {"bound"}) == {flop, path("hardware/a")}  # not the source
    assert graph.inputs(flop, {"ledger"}) == graph.inputs(flop, {"bound"})
    assert graph.inputs(flop, {"all-ids"}) == {flop}
    chain = {"hardware/a", "interconnects/l", "sources/s", "sources/t", "receipts/r"}
    assert graph.inputs(placement, {"ledger"}) == {placement, *map(path, chain)}
    assert graph.load_set([flop], {"record", "all-ids"}) == {flop}
    assert graph.load_set([flop, placement], reads.declared_reads()) == (
        graph.inputs(flop) | graph.inputs(placement)
    )


def test_a_change_affects_who_binds_it_and_the_ledgers_that_reach_it() -> None:
    graph = read_graph()
    path = "records/{}.yaml".format
    # the accelerator: the flop class binds it, the placement's ledger reaches it
    assert graph.affected([path("hardware/a")], graph) == {
        path("hardware/a"),
        path("flops/f"),
        path("placements/p"),
    }
    # a source only named: no content read of it but the ledger's (through the link)
    assert graph.affected([path("sources/t")], graph) == {path("sources/t"), path("placements/p")}
    # an id that comes or goes: whoever names it (kb.incremental adds these)
    assert graph.naming(["sources/s"]) == {path("flops/f"), path("hardware/a")}


def page_graph() -> DependencyGraph:
    """A flop class that names, binds and templates records, and what those reference."""
    f_targets = ("flops/g", "hardware/a", "hardware/b", "sources/s", "x/engine")
    nodes = {  # kind, targets, bound (as bound_of gives them: "x/engine" no schema marks)
        "flops/f": ("flop_class", f_targets, ("flops/g", "hardware/b", "x/engine")),
        "flops/g": ("flop_class", ("hardware/c",), ("hardware/c",)),
        "hardware/a": ("accelerator", ("interconnects/l", "sources/s"), ()),
        "hardware/b": ("accelerator", (), ()),
        "interconnects/l": ("interconnect", ("hardware/z",), ()),
        "placements/p": ("placement", ("flops/f",), ()),
    }
    files = {f"records/{i}.yaml": FileState(i, i, *node) for i, node in nodes.items()}
    refs = [
        Reference("flops/f", "/affected_by_hardware/0", "hardware/a", "accelerator"),
        Reference("flops/f", "/claims/0/bind/BW", "hardware/b#memory.bandwidth", "*"),
        Reference("flops/f", "/summary", "flops/g#claim:c", "*"),
        Reference("flops/f", "/claims/0/source", "sources/s", "source"),
        Reference("flops/g", "/claims/0/bind/X", "hardware/c#x", "*"),
        Reference("hardware/a", "/links/0/interconnect", "interconnects/l", "interconnect"),
        Reference("hardware/a", "/source", "sources/s", "source"),
        Reference("interconnects/l", "/used_by/0", "hardware/z", "accelerator"),
        Reference("placements/p", "/flop_class", "flops/f", "flop_class"),
    ]
    return DependencyGraph(files, refs)


def test_a_page_shows_the_values_of_what_it_binds_templates_and_the_engine_reads() -> None:
    graph = page_graph()
    # a binding, a claim template (and what that claim binds), a target no schema marks
    assert graph.bound("flops/f") == {"hardware/b", "flops/g", "hardware/c", "x/engine"}
    assert graph.bound("hardware/a") == set()  # links and sources: titles only
    assert graph.targets("flops/f") == {
        "flops/g",
        "hardware/a",
        "hardware/b",
        "sources/s",
        "x/engine",
    }


def test_a_page_shows_the_values_its_nodes_declare_bound_not_what_references_suggest() -> None:
    """DependencyGraph.bound reads each node's `bound` (FileState.bound, as the snapshot keeps it).

    With no references at all, a node's declared `bound` is what its page shows,
    not every target; a claim template adds what the claim's record declares bound.
    """
    files = {
        "a.yaml": FileState(
            "flops/a", "", "flop_class", ("hardware/x", "sources/s"), ("hardware/x",)
        ),
        "b.yaml": FileState("flops/b", "", "flop_class", ("flops/a",), ("flops/a",)),
        "c.yaml": FileState("flops/c", "", "flop_class", ("flops/a",), ()),
    }
    graph = DependencyGraph(files)
    assert graph.bound("flops/a") == {"hardware/x"}
    assert graph.bound("flops/c") == set()  # a plain reference: the title only
    claim = Reference("flops/b", "/summary", "flops/a#claim:c", "*")
    with_claim = DependencyGraph(files, [claim])
    assert with_claim.bound("flops/b") == {"flops/a", "hardware/x"}
    assert with_claim.bound("flops/b", claims=False) == {"flops/a"}


def test_a_page_reaches_one_declared_kind_per_step() -> None:
    graph = page_graph()
    chart = graph.along("flops/f", reads.PAGE_READS["flop_class"])
    assert chart == {"hardware/a", "hardware/b", "interconnects/l"}  # not the link's users
    assert graph.along("placements/p", reads.PAGE_READS["placement"]) == graph.reaches(
        "placements/p"
    )
    assert "hardware/z" in graph.reaches("placements/p")
    assert graph.along("hardware/a", ()) == set()
    assert graph.kind_of("interconnects/l") == "interconnect" and graph.kind_of("no/such") == ""


def test_page_declarations_name_kinds() -> None:
    for declared in (reads.PAGE_READS, reads.PAGE_SCANS):
        for kind, kinds in declared.items():
            assert kind in KINDS
            assert set(kinds) <= {*KINDS, "*"}, kind


@settings(max_examples=300)
@given(st.text(alphabet="/.ab\\-", max_size=12))
def test_path_parts_is_pathlibs(name: str) -> None:
    assert reads.path_parts(name) == Path(name).parts


@pytest.fixture(scope="module")
def shipped_graph() -> DependencyGraph:
    return DependencyGraph(file_nodes(open_kb(SHIPPED_RECORDS)))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_load_set_is_the_union_of_the_inputs(shipped_graph: DependencyGraph, data: Any) -> None:
    names = sorted(shipped_graph.files)
    picked = data.draw(st.lists(st.sampled_from(names), max_size=40))
    expected = set().union(*(shipped_graph.inputs(name) for name in picked))
    assert shipped_graph.load_set(picked) == expected


def test_the_nodes_a_validation_hands_over_are_the_nodes_of_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped_stores: Path
) -> None:
    """kb build's graph and page keys come from the snapshot: it must equal the records'."""
    shutil.copytree(SHIPPED_RECORDS, tmp_path / "records")
    monkeypatch.setenv("KB_CACHE_DIR", str(seed(shipped_stores, tmp_path / "cache")))
    monkeypatch.chdir(tmp_path)
    records = Path("records")
    validate(records)  # a full run: the snapshot the next runs bring up to date
    hot = records / "hardware/nvidia-h100-sxm.yaml"
    hot.write_text(hot.read_text().replace("{value: 3350,", "{value: 3351,", 1))
    receipt = records / "receipts/azure-nd-h100-v5-hbm-bandwidth.yaml"
    copy = receipt.with_name("azure-nd-h100-v5-hbm-bandwidth-copy.yaml")
    own = "id: receipts/azure-nd-h100-v5-hbm-bandwidth\n"
    copy.write_text(receipt.read_text().replace(own, own[:-1] + "-copy\n", 1))
    (records / "sources/arxiv-gpipe.yaml").unlink()
    result = validate(records)
    assert result.stats.mode == "incremental"
    kb = open_kb(records, checked=result)
    handed = reads.checked_nodes(kb)
    assert handed is not None
    assert handed["records/receipts/azure-nd-h100-v5-hbm-bandwidth-copy.yaml"].record_id
    assert "records/sources/arxiv-gpipe.yaml" not in handed
    made = file_nodes(kb)
    assert handed.keys() == made.keys()
    for name, node in made.items():
        got = handed[name]
        want = (node.record_id, node.claimed_id, node.kind, node.targets)
        assert (got.record_id, got.claimed_id, got.kind, got.targets) == want, name
    hot.write_text(hot.read_text().replace("{value: 3351,", "{value: 3352,", 1))
    assert reads.checked_nodes(open_kb(records, checked=result)) is None  # changed since


def test_a_full_run_hands_over_no_digests_and_so_no_nodes(
    shipped_run: tuple[Path, Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`shipped_run`'s full check of a copy of the shipped records: the subject is what a full
    run hands over, not its SymPy work (nor the repository's cache)."""
    whole = at_work(shipped_run, monkeypatch)
    assert whole.stats.mode == "full"
    kb = open_kb(Path("records"), checked=whole)
    assert kb.run.kept(reads.CHECKED_FILES) and reads.checked_nodes(kb) is None
