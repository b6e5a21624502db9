"""A full disk (simulated ENOSPC) stops kb with a clear message; nothing is half-written.

On the shipped sample (tests/sample.py): the report and every page are written through
the patched call (os.fdopen, Path.write_bytes) whatever the tree holds.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kb.cli import cli as main
from tests.sample import sample_copy


def _enospc(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class _FullStream:
    """A writable stream on a full disk: the first write fails."""

    def __init__(self, descriptor: int) -> None:
        self.descriptor = descriptor

    def __enter__(self) -> _FullStream:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.descriptor)

    def write(self, text: str) -> int:
        return _enospc()  # type: ignore[no-any-return]


def test_validate_output_on_a_full_disk_is_a_usage_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "report.json"
    report.write_text("the previous report\n", encoding="utf-8")
    # a cold store of its own: a warm .kb-cache in the tree would be read through the
    # patched fdopen too, and the test would depend on what ran before it
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path.with_name(tmp_path.name + "-cache")))
    records = sample_copy(tmp_path.with_name(tmp_path.name + "-sample") / "records")
    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: _FullStream(fd))
    result = CliRunner().invoke(
        main, ["validate", "--root", str(records), "--format", "json", "-o", str(report)]
    )
    assert result.exit_code == 2, result.output
    assert "No space left on device" in result.output
    assert "internal error" not in result.output and "Traceback" not in result.output
    assert report.read_text(encoding="utf-8") == "the previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_build_on_a_full_disk_keeps_the_published_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = sample_copy(tmp_path / "records")
    out = tmp_path / "site"
    runner = CliRunner()
    first = runner.invoke(main, ["build", "--no-plans", "--root", str(records), "--out", str(out)])
    assert first.exit_code == 0, first.output
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    # change a title so pages must be rewritten, then fill the disk
    h100 = records / "hardware" / "nvidia-h100-sxm.yaml"
    h100.write_text(h100.read_text("utf-8").replace("title: ", "title: Renamed ", 1), "utf-8")
    monkeypatch.setattr(Path, "write_bytes", _enospc)
    failed = runner.invoke(main, ["build", "--no-plans", "--root", str(records), "--out", str(out)])
    assert failed.exit_code == 2, failed.output
    assert "No space left on device" in failed.output
    assert "internal error" not in failed.output and "Traceback" not in failed.output
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".kb-cache", "records", "site"]
