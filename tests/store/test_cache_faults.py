"""The stores cannot change a result: damaged cache files and timed-out checks are recomputed.

`kb validate --format json` on a tree whose cache files were damaged (one bit
flipped, or cut short, anywhere in any file) prints exactly what it prints with
no cache at all; a check that ran out of time is checked again on the next run,
`--full` or not, instead of being replayed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.cli import cli
from tests.conftest import REPO
from tests.inprocess import kb_in_process

CASES = REPO / "tests" / "rules" / "cases"
BAD_SCHEMA = """\
kind: source
id: sources/bad-schema
title: A document
version: 1
status: draft
history:
  - {version: 1, date: "2026-11-30", change: First encoding.}
publisher: Somebody
source_type: pamphlet
"""


def _case_files(rule: str, case: str) -> dict[str, str]:
    cases = yaml.safe_load((CASES / f"{rule}.yaml").read_text(encoding="utf-8"))["cases"]
    return dict(cases[case]["files"])


def write_tree(root: Path) -> None:
    """A small tree with equations (a refuted claim, a derivation) and load/schema findings."""
    files = _case_files("eq_numeric_claim_refuted", "wrong_value")
    derivation = _case_files("eq_check_timeout", "small_rewrite_passes")["flops/x.yaml"]
    files["flops/y.yaml"] = derivation.replace("id: flops/x", "id: flops/y")
    files["sources/bad-schema.yaml"] = BAD_SCHEMA
    files["sources/bad-yaml.yaml"] = "kind: source\nid: [unclosed\n"
    for name, text in files.items():
        path = root / "records" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def validate(cache: Path, *extra: str) -> str:
    done = CliRunner().invoke(
        cli,
        ["validate", "--format", "json", *extra],
        env={"KB_CACHE_DIR": str(cache), "KB_JOBS": "1"},
        catch_exceptions=False,
    )
    assert done.exit_code == 1, done.output
    return done.output


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """The tree, its output with no cache, and a cache a run left (every store in it)."""
    root = tmp_path_factory.mktemp("faults")
    write_tree(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        reference = validate(root / "no-cache", "--full")
        shutil.rmtree(root / "no-cache")
        assert validate(root / "warm") == reference
    names = sorted(p.name for p in (root / "warm").iterdir())
    assert {n.split("-")[0].split(".")[0] for n in names} >= {"records", "equations", "run"}
    assert '"EQ007"' in reference and '"SC001"' in reference and '"LD004"' in reference
    return root, reference, root / "warm"


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_damaged_cache_file_changes_nothing(
    warm: tuple[Path, str, Path], monkeypatch: pytest.MonkeyPatch, data: Any
) -> None:
    root, reference, saved = warm
    cache = root / "damaged"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.copytree(saved, cache)
    files = sorted(p for p in cache.iterdir() if p.suffix == ".kbstore")
    path = data.draw(st.sampled_from(files))
    raw = bytearray(path.read_bytes())
    offset = data.draw(st.integers(0, len(raw) - 1))
    if data.draw(st.booleans()):
        raw[offset] ^= 1 << data.draw(st.integers(0, 7))
    else:
        del raw[offset:]
    path.write_bytes(bytes(raw))
    monkeypatch.chdir(root)
    assert validate(cache) == reference  # the snapshot, or what it falls back to
    assert validate(cache, "--full") == reference  # the record and equations stores
    assert validate(cache) == reference  # and what the damaged run saved


def spent(work: Any, steps: Any = None, run: Any = None) -> Any:
    """A derivation's budget of one step: a real stop, counted by the budget (not a faked raise)."""
    from kb.equations import timeout

    return timeout.run_with_budget(work, 1, run)


@pytest.fixture(scope="module")
def fresh_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`kb validate --format json --full` on `write_tree`'s tree with a cache of its own.

    What a run that never timed out prints; the same for both parameters below (the
    tree's bytes and display paths are the same), so made once."""
    root = tmp_path_factory.mktemp("fresh")
    write_tree(root)
    env = {"KB_CACHE_DIR": str(root / "fresh"), "KB_JOBS": "1"}
    done = kb_in_process(["validate", "--format", "json", "--full"], cwd=root, env=env)
    assert done.returncode == 1, done.stderr
    return done.stdout


@pytest.mark.parametrize("second", [["--full"], []])
def test_a_timed_out_check_is_not_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: list[str], fresh_output: str
) -> None:
    """A first run whose derivation ran out of time; the next one checks it again.

    In this process (tests/inprocess.py): the subject is what the stores keep, not the
    program's start (tests/commands/test_cli.py's subprocess tests hold the entry point)."""
    from kb.equations import derive

    write_tree(tmp_path)
    env = {"KB_CACHE_DIR": str(tmp_path / "cache"), "KB_JOBS": "1"}
    with monkeypatch.context() as patch:
        patch.setattr(derive, "run_with_budget", spent)
        first = kb_in_process(["validate", "--format", "json"], cwd=tmp_path, env=env)
    assert '"EQ014"' in first.stdout, first.stderr
    again = kb_in_process(["validate", "--format", "json", *second], cwd=tmp_path, env=env)
    assert '"EQ014"' not in again.stdout
    assert again.stdout == fresh_output


def test_a_site_built_with_a_timed_out_check_keeps_no_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest is a store too: a page that showed a timeout is rendered again."""
    from kb.api import open_kb, validate
    from kb.equations import derive
    from kb.resources import theme_dir
    from kb.sitegen.build import build
    from kb.sitegen.manifest import fingerprint, load_manifest

    write_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KB_JOBS", "1")
    with monkeypatch.context() as patch:
        patch.setattr(derive, "run_with_budget", spent)
        timed = validate(Path("records"), remember=False)
        assert "EQ014" in {f.code for f in timed.findings}
        build(open_kb(Path("records"), checked=timed), tmp_path / "_site", findings=timed.findings)
    assert load_manifest(tmp_path / "_site", fingerprint(theme_dir())).pages == {}
    again = validate(Path("records"), remember=False)
    assert "EQ014" not in {f.code for f in again.findings}
    report = build(
        open_kb(Path("records"), checked=again), tmp_path / "_site", findings=again.findings
    )
    assert "records/flops/y.html" in report.rendered
    build(open_kb(Path("records"), checked=again), tmp_path / "cold", findings=again.findings)
    page = "records/flops/y.html"
    assert (tmp_path / "_site" / page).read_bytes() == (tmp_path / "cold" / page).read_bytes()
    assert load_manifest(tmp_path / "_site", fingerprint(theme_dir())).pages  # kept this time
