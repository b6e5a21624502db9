"""The pipeline's contract: stages emit problems, rule modules own severity and hint, in order.

kb.checker.check_everything (what kb.api.validate runs) is load -> per-file stage ->
schema stage -> equations stage -> rules -> waivers -> locate. A stage never makes a
finding itself: the rule module that owns the code states the severity and the default
hint once, and changing them changes the finding. Every code kb can emit has such a module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import ModuleType

import pytest

from kb import checker, loader
from kb.api import validate
from kb.checker import build_knowledge_base
from kb.equations.engine import analysed
from kb.findings import Location, Problem, Severity
from kb.model import KnowledgeBase, Record, Reference
from kb.recordcache import RecordCache
from kb.rules import all_rules, by_code
from kb.rules._base import StageNotRun, finding_of
from kb.rules._prose import TEMPLATES
from tests.conftest import REPO, source_yaml, write_tree

CODE_LITERAL = re.compile(r"[A-Z]{2}\d{3}")
FLOP = """\
kind: flop_class
id: flops/f
title: F
version: 1
status: draft
history:
  - {version: 1, date: "2026-11-30", change: First encoding.}
summary: One equation.
symbols:
  a: {meaning: a, unit: s}
equations:
  e: {expr: a = b, text: An undeclared name.}
"""


DERIVATION = """\
derivations:
  - id: d
    steps:
      - {rule: solve_for, from: nope, var: a, result: e}
"""


def _codes_in_source() -> dict[str, list[str]]:
    """Every string literal of kb/ that is a rule code, with the files that spell it."""
    found: dict[str, list[str]] = {}
    for path in sorted((REPO / "kb").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if CODE_LITERAL.fullmatch(node.value):
                    found.setdefault(node.value, []).append(str(path.relative_to(REPO)))
    return found


def test_every_code_spelled_anywhere_is_owned_by_a_rule_module() -> None:
    from kb.equations import codes

    named = {v for k, v in vars(codes).items() if k.isupper() and isinstance(v, str)}
    assert named and all(CODE_LITERAL.fullmatch(code) for code in named)
    emitted = set(_codes_in_source()) | named
    registry = {rule.CODE for rule in all_rules()}
    assert emitted - registry == set()
    assert len(emitted & registry) > 60  # the scan really sees the codes


def test_eq_codes_are_spelled_in_one_place() -> None:
    spelled = {code: files for code, files in _codes_in_source().items() if code.startswith("EQ")}
    assert spelled, "no EQ code found: the scan is broken"
    assert {f for files in spelled.values() for f in files} == {"kb/equations/codes.py"}
    eq_rules = [rule for rule in all_rules() if rule.CODE.startswith("EQ")]
    assert {rule.CODE for rule in eq_rules} == set(spelled)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.CODE)
def test_every_rule_module_states_code_name_severity_hint_and_docs(rule: ModuleType) -> None:
    assert CODE_LITERAL.fullmatch(rule.CODE)
    assert isinstance(rule.NAME, str) and rule.NAME
    assert isinstance(rule.SEVERITY, Severity)
    assert isinstance(rule.HINT, str) and rule.HINT.strip(), f"{rule.CODE} has no HINT"
    assert (rule.__doc__ or "").strip()
    assert callable(rule.check)


def _only(findings: list, code: str):  # type: ignore[no-untyped-def,type-arg]
    chosen = [f for f in findings if f.code == code]
    assert len(chosen) == 1, findings
    return chosen[0]


# (module code, file under records/, its text): one case per stage
STAGE_CASES = [
    ("LD004", "sources/doc.yaml", "kind: [\n"),  # the loader
    ("LD010", "sources/doc.yaml", source_yaml().replace("title: A document", "title: no")),
    ("SC001", "sources/doc.yaml", source_yaml() + "colour: blue\n"),  # the schema stage
    ("EQ002", "flops/f.yaml", FLOP),  # the equations engine, with a hint of its own
    ("EQ016", "flops/f.yaml", FLOP.replace("a = b", "a = 2*a") + DERIVATION),  # the module's
]


@pytest.mark.parametrize(("code", "name", "text"), STAGE_CASES, ids=[c[0] for c in STAGE_CASES])
def test_a_rule_modules_severity_and_hint_are_what_its_findings_carry(
    code: str, name: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(
        tmp_path / "records", {name: text, "sources/x.yaml": source_yaml("sources/x")}
    )
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KB_JOBS", "1")
    rule = by_code(code)
    assert rule is not None
    before = _only(validate(root, remember=False).findings, code)
    assert before.severity is rule.SEVERITY is Severity.ERROR
    monkeypatch.setattr(rule, "SEVERITY", Severity.WARNING)
    monkeypatch.setattr(rule, "HINT", "the module's own words")
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache-2"))  # cached findings keep theirs
    after = _only(validate(root, remember=False).findings, code)
    assert after.severity is Severity.WARNING
    assert (before.message, before.location) == (after.message, after.location)
    if code == "EQ002":  # the engine names the undeclared symbol: its own hint stays
        assert after.hint == before.hint and "b" in after.hint
    else:
        assert after.hint == "the module's own words" != before.hint


def test_a_problem_keeps_its_own_hint_and_takes_the_modules_otherwise() -> None:
    where = Location("records/x.yaml", 1, 1, "")
    rule = by_code("LD012")
    assert rule is not None
    assert finding_of(Problem("LD012", where, "m")).hint == rule.HINT
    assert finding_of(Problem("LD012", where, "m", "rename it to x.yaml")).hint == (
        "rename it to x.yaml"
    )
    assert finding_of(Problem("SC001", where, "m", "")).hint == ""
    with pytest.raises(KeyError):
        finding_of(Problem("ZZ999", where, "m"))


def test_the_schema_stage_is_a_stage_not_a_side_effect_of_a_rule(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml() + "colour: x\n"})
    kb = build_knowledge_base(root)
    assert kb.run.schema is None and analysed(kb) is None
    for code in ("LD001", "SC001", "EQ001", "WV001"):
        rule = by_code(code)
        assert rule is not None
        with pytest.raises(StageNotRun):
            list(rule.check(kb))
    assert [f.code for f in checker.schema_stage(kb)] == ["SC001"]
    assert kb.run.schema is not None
    assert [f.code for f in by_code("SC001").check(kb)] == ["SC001"]  # type: ignore[union-attr]


def test_the_loader_reads_the_cache_and_never_writes_it(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml(), "x.yml": "a: 1\n"})
    cache = RecordCache(None, "salt")
    loaded = loader.load_files(root, None, cache)
    assert not cache.dirty
    assert [(item.fresh, item.record is not None) for item in loaded] == [
        (True, True),
        (False, False),
    ]
    assert [p.code for p in loaded[1].problems] == ["LD012"]
    assert all(isinstance(p, Problem) for item in loaded for p in item.problems)


def test_the_per_file_stage_in_workers_gives_what_one_process_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"sources/s{i}.yaml": source_yaml(f"sources/s{i}") for i in range(12)}
    files["sources/bad.yaml"] = source_yaml("sources/bad").replace("documentation", "poem")
    files["sources/ref.yaml"] = source_yaml("sources/ref") + "superseded_by: sources/s1\n"
    root = write_tree(tmp_path / "records", files)
    monkeypatch.setattr(loader, "PARALLEL_MIN_FILES", 3)
    runs = []
    for jobs in ("2", "1"):
        monkeypatch.setenv("KB_JOBS", jobs)
        kb = build_knowledge_base(root)
        runs.append((kb.references, kb.run.local, kb.run.kept(TEMPLATES)))
    assert runs[0] == runs[1]
    assert runs[1][0], "no reference found: the comparison proves little"


def test_the_prose_rules_resolve_the_templates_the_per_file_stage_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records checked alone this run carry their templates: the prose rules walk no prose."""
    import shutil

    import kb.rules._prose as prose
    from kb.prose.fields import record_templates
    from tests.conftest import SHIPPED_RECORDS

    shutil.copytree(SHIPPED_RECORDS, tmp_path / "records")
    gpu = tmp_path / "records" / "hardware" / "nvidia-h100-sxm.yaml"
    text = gpu.read_text(encoding="utf-8")
    gpu.write_text(text.replace("summary: ", "summary: See {#memory.nope}. ", 1), encoding="utf-8")
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    kb = build_knowledge_base(Path("records"))
    found = kb.run.kept(prose.TEMPLATES)
    assert found == {r.path: tuple(record_templates(r.data)) for r in kb}
    assert sum(map(len, found.values())) > 1  # the shipped records use templates

    def walked(data: object) -> list[object]:
        raise AssertionError("the prose was walked again")

    monkeypatch.setattr(prose, "record_templates", walked)
    carried = prose.broken_templates(kb)
    assert [(r.path, p) for r, p, _ in carried] == [(str(gpu.relative_to(tmp_path)), "/summary")]
    monkeypatch.setattr(prose, "record_templates", record_templates)
    kb.run.drop(prose.BROKEN, prose.TEMPLATES)  # as a record the cache knew
    assert prose.broken_templates(kb) == carried


def _record(record_id: str, kind: str = "source") -> Record:
    return Record(record_id, kind, f"records/{record_id}.yaml", {"kind": kind})


def test_a_frozen_knowledge_base_answers_as_an_unfrozen_one_and_refuses_records() -> None:
    kb = KnowledgeBase(root="")
    for record_id, kind in [("sources/b", "source"), ("hardware/a", "accelerator")]:
        kb.add(_record(record_id, kind))
    kb.references = [Reference("sources/b", "/x", "hardware/a#memory", "accelerator")]
    views = ([r.id for r in kb], kb.of_kind("source"))
    assert not kb.frozen and kb.freeze() is kb and kb.frozen
    assert ([r.id for r in kb], kb.of_kind("source")) == views
    assert views[0] == ["hardware/a", "sources/b"]
    with pytest.raises(TypeError):
        kb.add(_record("sources/c"))


def test_rules_beside_the_equations_in_a_child_find_what_one_process_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped_stores: Path
) -> None:
    """The schema stage and the whole-tree rules run in a forked child (kb.workers.beside)
    when a CPU is free: same findings, and the cache saved after them serves the next run.

    Per push on the small tree of tests/small_tree.py (every folder and every kind of
    reference of the shipped records, held by tests/records/test_small_tree.py): where a
    rule runs changes no finding of any tree, and the sample meets every rule the shipped
    tree meets at under half its records. The whole shipped tree with KB_FULL=1."""
    from kb.equations.cache import STORE as EQUATION_STORE
    from tests.conftest import break_h100, shipped_copy_with_broken_h100
    from tests.small_tree import FULL, copy_sample
    from tests.warm import seed

    if FULL:
        records = shipped_copy_with_broken_h100(tmp_path)
    else:
        records = break_h100(copy_sample(tmp_path / "records"))
    broken = records / "hardware" / "nvidia-h100-sxm.yaml"
    monkeypatch.setattr(checker, "BESIDE_MIN_RECORDS", 1)
    for cache in ("cache-2", "cache-1", "snapshot-2", "snapshot-1"):  # the claims' results only:
        seed(shipped_stores, tmp_path / cache, (EQUATION_STORE,))  # the record cache starts empty
    runs = {}
    for jobs in ("2", "1"):
        monkeypatch.setenv("KB_JOBS", jobs)
        monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / f"cache-{jobs}"))
        runs[jobs] = validate(tmp_path / "records", remember=False).findings
        saved = checker.open_cache(tmp_path / "records")
        assert len(saved.store.keys()) == len(list((tmp_path / "records").rglob("*.yaml")))
    assert runs["2"] == runs["1"]
    assert {"RF001", "SC001", "LG004"} <= {f.code for f in runs["1"]}  # whole-tree ones
    changed = {}  # the snapshot route: a full run, then one re-checked change
    for jobs in ("2", "1"):
        monkeypatch.setenv("KB_JOBS", jobs)
        monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / f"snapshot-{jobs}"))
        broken.write_text(broken.read_text().replace("basis: nope", "basis: vendor-spec"))
        first = validate(tmp_path / "records").findings
        broken.write_text(broken.read_text().replace("basis: vendor-spec", "basis: nope", 1))
        changed[jobs] = (first, validate(tmp_path / "records"))
    assert changed["2"][0] == changed["1"][0]
    assert changed["2"][1].findings == changed["1"][1].findings == runs["1"]
    assert changed["2"][1].stats.mode == "incremental"


def test_the_rules_beside_the_equations_never_read_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They may run before the equations stage (in a child): none may start the engine."""
    import shutil

    import kb.equations.engine as engine
    from tests.conftest import SHIPPED_RECORDS

    shutil.copytree(SHIPPED_RECORDS, tmp_path / "records")
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    kb = build_knowledge_base(tmp_path / "records")
    checker.schema_stage(kb)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a rule beside the equations stage ran the engine")

    monkeypatch.setattr(engine, "analyse", refused)
    apart = checker.rules_at("beside")
    assert {"LG003", "LG009", "PR001", "RF001"} <= {rule.CODE for rule in apart}
    # of the EQ rules, only the record rules that read the typed views (READS = "views")
    assert {rule.CODE for rule in apart if rule.CODE.startswith("EQ")} == {"EQ019", "EQ020"}
    for rule in apart:
        list(rule.check(kb))
    assert analysed(kb) is None


_FORK_READY_PROBE = """
import json, sys
from pathlib import Path
from kb.checker import _ready_to_fork, check_file
from kb.loader import load_knowledge_base
from kb.schema import fast_validator

kb, _ = load_knowledge_base(Path(sys.argv[1]))
before = set(sys.modules)
_ready_to_fork()
ready, compiled = set(sys.modules), fast_validator.cache_info().misses
checked = [check_file(record) for record in kb]
print(json.dumps({
    "prepared": sorted(ready - before),
    "imported_after": sorted(set(sys.modules) - ready),
    "compiled_after": fast_validator.cache_info().misses - compiled,
    "kinds": sorted({record.kind for record in kb}),
}))
"""


def test_what_check_file_needs_is_ready_before_the_workers_fork(tmp_path: Path) -> None:
    """After `_ready_to_fork` (run once before the parse pool forks), `check_file` imports
    and compiles nothing: each worker inherits the rule modules and the schema validators
    instead of making its own (BENCHMARKS.md, issue 34, session 20).

    In a fresh process, on the shipped sample (every kind its roots reach); the premise:
    the rule modules were not imported before it ran.
    """
    import json
    import subprocess
    import sys

    from tests.sample import sample_copy

    root = sample_copy(tmp_path / "records")
    done = subprocess.run(
        [sys.executable, "-c", _FORK_READY_PROBE, str(root)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    seen = json.loads(done.stdout)
    assert "kb.rules.schema_violation" in seen["prepared"]  # the premise: it did import them
    assert len(seen["kinds"]) >= 5
    assert seen["imported_after"] == [] and seen["compiled_after"] == 0
