"""`kb validate PATH`: PATH's findings, and on its referrers only what PATH can cause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import link_yaml, run_kb, source_yaml, write_tree

LINK = link_yaml(
    per_device="basis: derived, source: sources/nowhere", summary="A link of about 17 lanes."
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("paths")
    files = {
        "sources/doc.yaml": source_yaml(notes='"about 23 pages"'),
        "interconnects/link.yaml": LINK,
    }
    write_tree(top / "records", files)
    return top


def found(tree: Path, *paths: str) -> set[tuple[str, str]]:
    done = run_kb(["validate", "--output-format", "json", *paths], cwd=tree)
    return {(f["path"], f["code"]) for f in json.loads(done.stdout)["findings"]}


def test_the_whole_tree(tree: Path) -> None:
    assert found(tree) == {
        ("records/sources/doc.yaml", "PR003"),
        ("records/interconnects/link.yaml", "PR003"),
        ("records/interconnects/link.yaml", "RF001"),
    }


def test_a_path_leaves_out_its_referrers_record_local_findings(tree: Path) -> None:
    # the link cites the doc: its cross-record finding stays, its prose warning goes
    assert found(tree, "records/sources/doc.yaml") == {
        ("records/sources/doc.yaml", "PR003"),
        ("records/interconnects/link.yaml", "RF001"),
    }


def test_the_referrer_itself_named_shows_all_of_its_findings(tree: Path) -> None:
    assert found(tree, "records/interconnects/link.yaml") == {
        ("records/interconnects/link.yaml", "PR003"),
        ("records/interconnects/link.yaml", "RF001"),
    }


def test_a_folder_is_its_files(tree: Path) -> None:
    assert found(tree, "records/sources") == found(tree, "records/sources/doc.yaml")
