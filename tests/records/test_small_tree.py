"""The per-push sample of the shipped records (tests/small_tree.py) covers what it claims to."""

from __future__ import annotations

from pathlib import Path

from tests.small_tree import categories, copy_sample, sample_ids, shipped_kb


def test_the_sample_has_every_folder_and_every_kind_of_reference_of_the_shipped_tree() -> None:
    shipped = shipped_kb().records
    sample = sample_ids()
    assert {rid.split("/")[0] for rid in sample} == {rid.split("/")[0] for rid in shipped}
    assert categories(sample) == categories(shipped)
    assert any(binding for _, _, binding, _ in categories(sample))  # `id#field` bindings too
    assert len(sample) < len(shipped) * 0.6  # a sample, or the per-push saving is gone


def test_the_sample_is_the_shipped_files_byte_for_byte(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "records")
    written = sorted(root.rglob("*.yaml"))
    assert len(written) == len(sample_ids())
    shipped = Path(__file__).resolve().parents[2] / "records"
    for path in written:
        assert path.read_bytes() == (shipped / path.relative_to(root)).read_bytes()
