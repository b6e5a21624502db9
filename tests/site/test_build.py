"""Build guarantees: byte-identical rebuilds, atomic output, incremental writes, escaping, CLI.

What the writer guarantees (a build is byte-identical to another, an interrupted or failed
build leaves the previous site or nothing, a rebuild writes only the pages whose inputs
changed, progress once per record) does not depend on which records it writes, so per push
those tests build the rebuild sample (tests/site/sample_site.py: 173 shipped records with
every page template and every kind of edge between pages and records, held by
tests/site/test_sample_site.py), the shipped records with `KB_FULL=1`; one cold build
of it per module (`sample_build`) is read by the tests that need a cold build, and
copied by those that rebuild over one. The tests that read the run's shared build of the
shipped records (`built_site`) still do.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import kb.sitegen.build as site_build
import kb.sitegen.record_pages as site_pages
from kb.cli import cli
from kb.model import KnowledgeBase
from kb.sitegen.build import BuildReport, build
from tests.sample import full
from tests.site.conftest import SEED_FLOP, XSS_TITLE, load
from tests.site.sample_site import seeded_records


def digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory, shipped_stores: Path) -> KnowledgeBase:
    """The rebuild sample checked (the shipped records with KB_FULL=1): see the docstring."""
    root = tmp_path_factory.mktemp("sample")
    kb, _ = load(seeded_records(root, shipped_stores))
    return kb


@pytest.fixture(scope="module")
def sample_build(
    shipped: KnowledgeBase, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, BuildReport, list[int]]:
    """One cold build of `shipped` per module: (its folder, its report, its progress steps).

    The tests only read it; one that rebuilds takes a copy (`site_copy`): a page's key
    names its record's path, not the output folder (kb.sitegen.deps), so a copy is the
    same site to the next build.
    """
    steps: list[int] = []
    out = tmp_path_factory.mktemp("sample-build") / "_site"
    report = build(shipped, out, progress=steps.append)
    return out, report, steps


def site_copy(sample_build: tuple[Path, BuildReport, list[int]], out: Path) -> Path:
    """A copy of the module's cold build at `out` (to rebuild over); returns `out`."""
    shutil.copytree(sample_build[0], out, symlinks=True)
    return out


def test_two_builds_of_the_same_tree_are_byte_identical(
    repo_copy: Path,
    built_site: Path,
    shipped: KnowledgeBase,
    sample_build: tuple[Path, BuildReport, list[int]],
    tmp_path: Path,
) -> None:
    """Two cold builds in one process are byte-identical: per push two of the rebuild
    sample (the module's `sample_build` and one more); with KB_FULL=1 a second one of
    the shipped tree equals the run's shared one
    (conftest.py's `built_site`, made the same way: its own load, the findings but errors).
    (test_builds_in_separate_processes_are_byte_identical compares `built_site` per push.)"""
    if full():
        kb, findings = load(repo_copy / "records")
        kept = [f for f in findings if f.severity.value != "error"]
        build(kb, tmp_path / "two", findings=kept)
        one, two = digests(built_site), digests(tmp_path / "two")
    else:
        build(shipped, tmp_path / "two")
        one, two = digests(sample_build[0]), digests(tmp_path / "two")
    assert len(one) > 50
    assert one == two


BUILD_IN_A_FRESH_PROCESS = """
import sys
from pathlib import Path
from kb.api import open_kb, validate
from kb.sitegen.build import build
result = validate(Path(sys.argv[1]), remember=False)
findings = [f for f in result.findings if f.severity.value != "error"]
shown = findings if sys.argv[3] == "findings" else []
build(open_kb(Path(sys.argv[1]), checked=result), Path(sys.argv[2]), findings=shown)
"""


def test_builds_in_separate_processes_are_byte_identical(
    request: pytest.FixtureRequest,
    shipped: KnowledgeBase,
    sample_build: tuple[Path, BuildReport, list[int]],
    tmp_path: Path,
) -> None:
    """A build in a fresh process with another hash seed equals one made in this test
    process (hash seeds are random per process unless set): per push the module's
    `sample_build` of the rebuild sample (what depends on a hash seed, the order of a
    set or a dict built from one, is in the writer and the templates, not in which
    records there are: see the module docstring); with KB_FULL=1 the run's shared
    build of the shipped records (`built_site`)."""
    import subprocess
    import sys

    if full():
        records = request.getfixturevalue("repo_copy") / "records"
        site, findings = request.getfixturevalue("built_site"), "findings"
    else:  # the sample's records where `sample_build` read them (page keys name their paths)
        records, site, findings = Path(shipped.root), sample_build[0], "none"
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    subprocess.run(
        [sys.executable, "-c", BUILD_IN_A_FRESH_PROCESS, str(records), str(tmp_path), findings],
        check=True,
        env={**os.environ, "PYTHONHASHSEED": seed},
        timeout=300,
    )
    assert len(digests(site)) > 50
    assert digests(tmp_path) == digests(site)


def test_an_interrupted_build_leaves_the_previous_site_intact(
    shipped: KnowledgeBase,
    sample_build: tuple[Path, BuildReport, list[int]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = site_copy(sample_build, tmp_path / "_site")
    before = digests(out)
    calls = {"n": 0}
    real = site_pages.record_context

    def interrupted(record, kb):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 10:
            raise KeyboardInterrupt  # as if the user pressed Ctrl-C midway
        return real(record, kb)

    monkeypatch.setattr(site_pages, "record_context", interrupted)
    changed = _retitled(shipped, SEED_FLOP, "A new title")
    with pytest.raises(KeyboardInterrupt):
        build(changed, out)
    assert calls["n"] == 10
    assert digests(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["_site"]  # no staging folder left over


def test_a_failed_first_build_leaves_nothing_behind(
    shipped: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site_build, "write_search", _fail)
    with pytest.raises(RuntimeError):
        build(shipped, tmp_path / "_site")
    assert list(tmp_path.iterdir()) == []


def _fail(site: object) -> None:
    raise RuntimeError("disk full")


def _retitled(kb: KnowledgeBase, record_id: str, title: str) -> KnowledgeBase:
    copy = KnowledgeBase(kb.root, dict(kb.records), list(kb.duplicates), list(kb.references))
    record = copy.records[record_id]
    copy.records[record_id] = dataclasses.replace(record, data={**record.data, "title": title})
    copy.run.schema = kb.run.schema  # a new title: the validation's schema verdict stands
    return copy


def test_a_rebuild_rewrites_only_the_pages_that_depend_on_the_change(
    shipped: KnowledgeBase, sample_build: tuple[Path, BuildReport, list[int]], tmp_path: Path
) -> None:
    out = site_copy(sample_build, tmp_path / "_site")
    first = sample_build[1]  # the cold build `out` is a copy of
    assert first.kept == []
    untouched = "records/sources/gcp-tpu-v5e.html"
    inode = os.stat(out / untouched).st_ino
    same = build(shipped, out)
    assert same.written == []
    changed_id = "models/llama-3.1-70b"  # in the rebuild sample, cited there by placements
    report = build(_retitled(shipped, changed_id, "Llama 70B, renamed"), out)
    written = set(report.written)
    assert f"records/{changed_id}.html" in written and f"records/{changed_id}.json" in written
    assert "records/models/index.html" in written and "search-index.js" in written
    assert untouched in report.kept and os.stat(out / untouched).st_ino == inode
    assert len(written) < len(report.kept) / 4
    assert "Llama 70B, renamed" in (out / f"records/{changed_id}.html").read_text()


def test_record_strings_are_escaped_everywhere(built_site: Path) -> None:
    page = (built_site / "records/flops/xss-probe.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page
    for html in built_site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "<script>alert" not in text, html
        assert "<b>probe</b>" not in text, html
    index = (built_site / "search-index.js").read_text(encoding="utf-8")
    assert "</script>" not in index and XSS_TITLE not in index
    assert "\\u003cscript>alert(1)\\u003c/script>" in index


def test_record_json_and_schemas_are_published_at_stable_urls(built_site: Path) -> None:
    import json

    data = json.loads((built_site / f"records/{SEED_FLOP}.json").read_text(encoding="utf-8"))
    assert data["id"] == SEED_FLOP
    assert json.loads((built_site / "schemas/flop_class.schema.json").read_text())["$schema"]


def test_kb_build_refuses_a_knowledge_base_with_errors(tmp_path: Path) -> None:
    records = tmp_path / "records" / "sources"
    records.mkdir(parents=True)
    (records / "broken.yaml").write_text("kind: source\nid: [unclosed\n", encoding="utf-8")
    out = tmp_path / "_site"
    result = CliRunner().invoke(
        cli, ["build", "--root", str(tmp_path / "records"), "--out", str(out)]
    )
    assert result.exit_code == 1
    assert "LD004" in result.output and "not written" in result.output
    assert not out.exists()


def test_kb_build_writes_a_clean_knowledge_base(tmp_path: Path) -> None:
    from tests.conftest import source_yaml

    records = tmp_path / "records" / "sources"
    records.mkdir(parents=True)
    (records / "doc.yaml").write_text(
        source_yaml(
            "sources/doc", url="https://example.org/doc", accessed='"2026-11-30"', tier="T3"
        ),
        encoding="utf-8",
    )
    out = tmp_path / "_site"
    result = CliRunner().invoke(
        cli, ["build", "--root", str(tmp_path / "records"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert (out / "records/sources/doc.html").is_file()
    assert "wrote" in result.output
    # the default build has the planner's pages, a tree without a model included
    assert "No model of this knowledge base." in (out / "plans/index.html").read_text()
    assert (out / "explore/index.html").is_file()


def test_progress_is_reported_once_per_record(
    shipped: KnowledgeBase, sample_build: tuple[Path, BuildReport, list[int]]
) -> None:
    steps = sample_build[2]  # the module's cold build reported its progress
    assert sum(steps) == len(shipped) > 0


def test_rules_catalogue_lists_every_registered_rule(built_site: Path) -> None:
    from kb.rules import all_rules, summary
    from kb.sitegen.inline_code import render

    html = (built_site / "rules/index.html").read_text(encoding="utf-8")
    for rule in all_rules():
        assert f'id="{rule.CODE}"' in html
        assert render(summary(rule)) in html  # escaped, `code spans` as code or maths


def test_every_record_has_a_page_and_json_and_the_home_page_counts_them(
    built_site: Path, repo_copy: Path
) -> None:
    from kb.api import open_kb

    shipped = open_kb(repo_copy / "records")  # the records `built_site` was built from
    pages = {
        p.relative_to(built_site / "records").with_suffix("").as_posix()
        for p in (built_site / "records").rglob("*.json")
    }
    assert {r.id for r in shipped} <= pages
    home = (built_site / "index.html").read_text(encoding="utf-8")
    assert f"<p>{len(shipped)} records in " in home  # the shipped ones and the probe


def test_a_swap_cut_in_half_is_undone_before_the_next_build(tmp_path: Path) -> None:
    from kb.sitegen.output import staged_output

    out = tmp_path / "_site"
    old = tmp_path / "_site.old"
    old.mkdir()
    (old / "index.html").write_text("previous", encoding="utf-8")
    (old / ".kb-site").write_text("", encoding="utf-8")
    with pytest.raises(RuntimeError), staged_output(out) as writer:
        writer.write_text("index.html", "new")
        raise RuntimeError("crash before the swap")
    assert (out / "index.html").read_text() == "previous" and not old.exists()


def test_site_paths_cannot_leave_the_output_folder(tmp_path: Path) -> None:
    from kb.sitegen.output import staged_output

    with pytest.raises(ValueError), staged_output(tmp_path / "_site") as writer:
        writer.write_text("../escape.html", "x")
    assert not (tmp_path / "escape.html").exists() and not (tmp_path / "_site").exists()


def test_kb_build_never_replaces_a_folder_it_did_not_write(tmp_path: Path) -> None:
    from tests.conftest import source_yaml

    records = tmp_path / "records" / "sources"
    records.mkdir(parents=True)
    (records / "doc.yaml").write_text(
        source_yaml(
            "sources/doc", url="https://example.org/doc", accessed='"2026-11-30"', tier="T3"
        ),
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        cli, ["build", "--root", str(tmp_path / "records"), "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "refusing to replace it" in result.output
    assert (records / "doc.yaml").is_file()
    names = [p.name for p in tmp_path.iterdir()]
    assert ".kb-site" not in names and not [n for n in names if "building" in n]


def test_kb_build_shows_a_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    import pty
    import subprocess
    import sys

    from tests.conftest import source_yaml

    records = tmp_path / "records" / "sources"
    records.mkdir(parents=True)
    (records / "doc.yaml").write_text(
        source_yaml(
            "sources/doc", url="https://example.org/doc", accessed='"2026-11-30"', tier="T3"
        ),
        encoding="utf-8",
    )
    command = [
        sys.executable,
        "-m",
        "kb",
        "build",
        "--no-plans",
        "--root",
        str(tmp_path / "records"),
        "--out",
        str(tmp_path / "_site"),
    ]
    leader, follower = pty.openpty()
    with os.fdopen(leader, "rb", buffering=0) as terminal:
        done = subprocess.run(command, stderr=follower, stdout=subprocess.DEVNULL, timeout=120)
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = terminal.read(4096)
            except OSError:  # the terminal closes once the child's side is gone
                break
            if not chunk:
                break
            shown += chunk
    assert done.returncode == 0 and b"Record pages" in shown
    piped = subprocess.run(command, capture_output=True, timeout=120)
    assert piped.returncode == 0 and b"Record pages" not in piped.stderr
