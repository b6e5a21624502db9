"""`kb calc` on a record that exists but failed to load says so, and where (issue 37, T3-12).

Before, it said "no record 'flops/x'" and suggested `kb list`, though the file is there.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from tests.conftest import write_tree


def _calc(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["calc", *args, "--root", "records"])
    return result.exit_code, result.output


def test_a_record_that_failed_to_load_is_named_with_its_first_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path / "records", {})
    (tmp_path / "records" / "flops").mkdir()
    (tmp_path / "records" / "flops" / "x.yaml").write_text(
        "kind: flop_class\nid: flops/x\n  bad: [\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    code, output = _calc("flops/x")
    assert code == 2, output
    assert "record 'flops/x' exists but failed to load: records/flops/x.yaml:3:" in output
    assert "LD004" in output and "no record" not in output
    code, output = _calc("flops/y")  # a record that is not there at all: as before
    assert code == 2 and "no record 'flops/y'" in output, output
