"""`kb build` writes the planner's pages (the default, as `--plans`); `--no-plans` leaves them out.

The default is on (issue 36: the explorer and the worked tables are what a reader of the
default site came for), accepting the cold cost: a cold build of the shipped tree with the
planner's pass costs some four times the CPU of one without it (CHANGELOG, session 20). A
later build reads the passes from kb's store. tests/site/test_explorer_menus.py builds
through the command both ways on a small corpus and reads the pages.

The site builder is replaced by a recorder, so the test reads what the command asks
of it (the menus, or None) without pricing the menus: the pages themselves are
tests/site/test_explorer.py's. The tree is one source record: what the command passes
on does not depend on the records, and its check costs next to nothing.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.sitegen.explorer import DEFAULT_MENUS


def asked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *extra: str) -> Any:
    import kb.sitegen.build
    from tests.conftest import source_yaml

    root = tmp_path / "records"
    if not root.exists():
        (root / "sources").mkdir(parents=True)
        (root / "sources/doc.yaml").write_text(
            source_yaml("sources/doc", url="https://example.org/doc", accessed='"2026-11-30"'),
            encoding="utf-8",
        )

    seen: list[Any] = []

    def recorder(kb: Any, out: Path, **kwargs: Any) -> Any:
        seen.append(kwargs.get("plans"))
        return SimpleNamespace(rendered=[], written=[], kept=[])

    monkeypatch.setattr(kb.sitegen.build, "build", recorder)
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["build", "--root", str(root), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    assert len(seen) == 1
    return seen[0]


def test_the_planner_is_on_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert asked(monkeypatch, tmp_path) is DEFAULT_MENUS
    assert asked(monkeypatch, tmp_path, "--plans") is DEFAULT_MENUS


def test_no_plans_leaves_the_planner_out(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert asked(monkeypatch, tmp_path, "--no-plans") is None


def test_the_help_says_what_the_default_costs() -> None:
    result = CliRunner().invoke(cli, ["build", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "--plans / --no-plans" in text and "[default: plans]" in text
    assert "four times the CPU with them" in text and "--no-plans leaves them out" in text
