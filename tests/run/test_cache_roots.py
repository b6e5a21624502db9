"""Two records roots that share a cache folder each get their own findings (issue 34's bug).

`KB_CACHE_DIR` shared by two trees, or the default `.kb-cache` that `--root tree` and
`--root tree/records` both use, held one record cache: the same file, at the same
display path and with the same bytes, has another id under another root, and the
second run reused the first root's ID001/ID002 (or their absence). The stores are
now keyed by the resolved records root.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.api import validate
from tests.conftest import source_yaml, write_tree


def _shown(root: Path, remember: bool) -> list[tuple[str, str, int, str]]:
    result = validate(root, remember=remember)
    return [(f.code, f.location.path, f.location.line, f.message) for f in result.findings]


@pytest.mark.parametrize("remember", [True, False], ids=["snapshot", "full"])
@pytest.mark.parametrize("shared", ["KB_CACHE_DIR", "default"])
def test_two_roots_sharing_a_cache_folder_each_get_their_own_findings(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, remember: bool, shared: str
) -> None:
    records = write_tree(in_tmp / "tree" / "records", {"sources/doc.yaml": source_yaml()})
    roots = {"tree": in_tmp / "tree", "records": records}
    expected = {}
    for name, root in roots.items():  # each alone, with a cache of its own
        monkeypatch.setenv("KB_CACHE_DIR", str(in_tmp / f"alone-{name}"))
        expected[name] = _shown(root, remember)
    assert expected["records"] == []
    assert {"ID001", "ID002"} <= {row[0] for row in expected["tree"]}  # the roots differ
    if shared == "KB_CACHE_DIR":
        monkeypatch.setenv("KB_CACHE_DIR", str(in_tmp / "shared"))
    else:  # both roots keep their stores in tree/.kb-cache
        monkeypatch.delenv("KB_CACHE_DIR", raising=False)
    for name in ("tree", "records", "tree", "records"):
        assert _shown(roots[name], remember) == expected[name], name
