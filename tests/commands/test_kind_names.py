"""Every command that takes a kind accepts its name and its folder, through one resolver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.model import FOLDER_BY_KIND, KIND_BY_FOLDER, KIND_NAMES, KINDS, kind_named
from tests.conftest import run_kb

NAMES = [(name, kind_named(name)) for name in KIND_NAMES]


def test_every_kind_and_every_folder_names_its_kind() -> None:
    assert set(KIND_NAMES) == set(KINDS) | set(KIND_BY_FOLDER)
    for kind, folder in FOLDER_BY_KIND.items():
        for typed in (kind, folder, folder + "/", kind.upper(), f" {folder.title()} "):
            assert kind_named(typed) == kind, typed
    for typed in ("", "flop", "record", "flops/x", "hardware_"):
        assert kind_named(typed) is None, typed


def _invoke(cwd: Path, *args: str) -> tuple[int, str]:
    done = CliRunner().invoke(cli, [*args, "--root", str(cwd)])
    return done.exit_code, done.output


@pytest.mark.parametrize(("name", "kind"), NAMES, ids=[n for n, _ in NAMES])
def test_new_and_list_accept_the_same_names(name: str, kind: str, tmp_path: Path) -> None:
    root = tmp_path / "records"
    root.mkdir()
    folder = FOLDER_BY_KIND[kind]
    code, out = _invoke(root, "new", name, f"{folder}/made-by-{name}")
    assert code == 0, out
    written = (root / folder / f"made-by-{name}.yaml").read_text(encoding="utf-8")
    assert f"kind: {kind}\n" in written
    code, out = _invoke(root, "list", "--kind", name, "--format", "json")
    assert code == 0, out
    rows = json.loads(out)
    assert [(r["id"], r["kind"]) for r in rows] == [(f"{folder}/made-by-{name}", kind)]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["new", "flop", "flops/x"], "'flop' is not a kind (did you mean 'flop_class'?)"),
        (["list", "--kind", "hardwar"], "'hardwar' is not a kind (did you mean 'hardware'?)"),
        (["list", "--kind", "widget"], "the kinds, each with its folder: flop_class (flops)"),
    ],
)
def test_an_unknown_kind_is_a_usage_error_naming_kinds_and_folders(
    args: list[str], said: str, tmp_path: Path
) -> None:
    (tmp_path / "records").mkdir()
    done = run_kb(args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr
