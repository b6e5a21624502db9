"""The premise of the install tests' per-push tree: the sample holds what they edit and cite.

tests/install/conftest.py's `user_records` is the shipped sample (tests/sample.py) per
push. The tests edit the H100 (its vendor and HBM bandwidth lines), a receipt's source,
a source's title, and delete or rename a source cited by five figures; the HBM edit must
refute a claim in another file. Each of those lines is in the sample as in the shipped
tree, and the cited source is cited as often.
"""

from __future__ import annotations

import re

from tests.conftest import SHIPPED_RECORDS
from tests.sample import sample_files

EDITED = (  # (file, a line a test edits): tests/install/conftest.py, test_precommit.py
    ("hardware/nvidia-h100-sxm.yaml", r"^vendor: NVIDIA$"),
    ("hardware/nvidia-h100-sxm.yaml", r"^  bandwidth: \{value: 3350\b"),
    ("receipts/azure-nd-h100-v5-hbm-bandwidth.yaml", r"^source: sources/\S+$"),
    ("sources/azure-nd-h100-v5-results.yaml", r'^title: "(.*)"$'),
)
CITED = "sources/glennklockwood-h100"  # test_hook_whole_tree.py: 5 RF001 when it goes


def citations(files: list[str]) -> int:
    pattern = re.compile(rf"\b{re.escape(CITED)}\b")
    return sum(
        len(pattern.findall((SHIPPED_RECORDS / name).read_text(encoding="utf-8")))
        for name in files
        if name != f"{CITED}.yaml"
    )


def test_the_sample_holds_every_line_the_install_tests_edit() -> None:
    names = {str(path) for path in sample_files()}
    for name, pattern in EDITED:
        assert name in names, name
        text = (SHIPPED_RECORDS / name).read_text(encoding="utf-8")
        assert re.search(pattern, text, flags=re.M), (name, pattern)
    assert f"{CITED}.yaml" in names


def test_the_cited_source_is_cited_as_often_in_the_sample() -> None:
    shipped = [str(p.relative_to(SHIPPED_RECORDS)) for p in SHIPPED_RECORDS.rglob("*.yaml")]
    sample = [str(path) for path in sample_files()]
    assert citations(sample) == citations(shipped) == 5


def test_a_flop_class_of_the_sample_binds_the_h100() -> None:
    flops = [str(p) for p in sample_files() if str(p).startswith("flops/")]
    assert any(
        "hardware/nvidia-h100-sxm" in (SHIPPED_RECORDS / name).read_text(encoding="utf-8")
        for name in flops
    ), flops
