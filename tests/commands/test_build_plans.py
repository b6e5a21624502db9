"""`kb build --plans` writes the planner's pages; without it (the default) they are left out.

The default is off: a cold build of the shipped tree with the planner's pass costs some
four times the CPU of one without it (57 s against 14 s in one process; CHANGELOG, session
19), above the two and a half times that a default may cost. A later build reads the passes
from kb's store.

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


def test_plans_asks_for_the_default_menus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert asked(monkeypatch, tmp_path, "--plans") is DEFAULT_MENUS


def test_the_planner_is_off_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert asked(monkeypatch, tmp_path) is None
    assert asked(monkeypatch, tmp_path, "--no-plans") is None
