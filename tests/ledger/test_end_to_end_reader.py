"""One reader of kb/data/end-to-end.json (kb.resources.end_to_end).

Every end-to-end rule reads its declaration through it: the file is read and parsed
once per process, a section is asked by name, and a missing file, unparsable JSON or
a missing or misshapen section is kb's one ResourceMissing ("missing or malformed",
exit 2 from a command), never a traceback. Each reader is held to that here, and no
ledger module opens the packaged data itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kb import resources
from kb.ledger import endtoend, group_scales, overlap, serving, trtllm_bench, turbomind_pool
from kb.resources import ResourceMissing
from tests.conftest import SHIPPED_RECORDS
from tests.inprocess import kb_in_process

READERS: tuple[Callable[[], Any], ...] = (
    endtoend.declaration,
    endtoend.unpriced_reasons,
    endtoend.kv_read_per_query_head_versions,
    endtoend.moe_expert_rates,
    group_scales.declared,
    overlap.overlapped_rows,
    serving.schedulers,
    trtllm_bench.versions,
    turbomind_pool.declared_pools,
)


def _clear() -> None:
    resources._end_to_end_document.cache_clear()
    for reader in READERS:
        reader.cache_clear()  # type: ignore[attr-defined]


@pytest.fixture
def packaged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """end-to-end.json at a path the test writes (or not); every cache cleared around it."""
    path = tmp_path / "end-to-end.json"
    monkeypatch.setattr(resources, "end_to_end_path", lambda: path)
    _clear()
    yield path
    _clear()


def test_the_file_is_parsed_once_and_every_reader_reads_it() -> None:
    assert resources._end_to_end_document() is resources._end_to_end_document()
    for reader in READERS:
        assert reader()  # each declaration is present and not empty


@pytest.mark.parametrize("text", [None, "{", "[]", "{}", '{"unpriced": 3, "band": "x"}'])
def test_a_missing_or_malformed_file_is_kbs_error(packaged: Path, text: str | None) -> None:
    if text is not None:
        packaged.write_text(text, encoding="utf-8")
    for reader in READERS:
        with pytest.raises(ResourceMissing, match="missing or malformed.*reinstall kb"):
            reader()


def test_a_command_says_so_in_one_line(packaged: Path) -> None:
    packaged.write_text("{", encoding="utf-8")
    done = kb_in_process(["list", "--end-to-end", "--format", "json"], SHIPPED_RECORDS.parent)
    assert done.returncode == 2
    assert "missing or malformed" in done.stderr and "Traceback" not in done.stderr
    assert "internal error" not in done.stderr


def test_no_ledger_module_opens_the_packaged_data_itself() -> None:
    ledger = Path(endtoend.__file__).parent
    for module in sorted(ledger.glob("*.py")):
        text = module.read_text(encoding="utf-8")
        assert "_package_dir" not in text, module.name
        assert 'end-to-end.json").read' not in text, module.name
