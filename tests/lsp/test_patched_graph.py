"""DependencyGraph.patched: a changed file moved in the indexes equals indexing every file again.

The language server patches the disk's graph on each keystroke instead of indexing the
whole tree (kb.lsp.engine); here random edits of random nodes (ids, claims, references,
bindings, files added) hold the patched indexes, list order included, and what
`affected` and `load_set` answer, to a fresh build's.
"""

from __future__ import annotations

import random

import pytest

from kb.reads import DependencyGraph, declared_reads
from kb.snapshot import FileState

IDS = [f"{kind}/r{i}" for kind in ("flops", "hardware", "placements", "receipts") for i in range(6)]
KINDS = {
    "flops": "flop_class",
    "hardware": "hardware",
    "placements": "placement",
    "receipts": "receipt",
}


def _node(rng: random.Random, record_id: str) -> FileState:
    targets = tuple(sorted(set(rng.sample(IDS, rng.randint(0, 4)))))
    bound = tuple(t for t in targets if rng.random() < 0.5)
    claimed = rng.choice([record_id, record_id, "", rng.choice(IDS)])
    return FileState(
        rng.choice([record_id, record_id, ""]),
        claimed,
        KINDS[record_id.split("/")[0]],
        targets,
        bound,
    )


INDEXES = ("_holders", "_named", "_referrers", "_binders")


@pytest.mark.parametrize("seed", range(40))
def test_patched_equals_a_fresh_build(seed: int) -> None:
    rng = random.Random(seed)
    disk = {f"records/{i}.yaml": _node(rng, i) for i in rng.sample(IDS, 16)}
    before = DependencyGraph(disk)
    for _ in range(3):  # the same disk graph patched again and again, as on each keystroke
        changed = rng.sample(sorted(disk), 2) + [f"records/{rng.choice(IDS)}-new.yaml"]
        files = {n: s for n, s in disk.items() if n not in changed}
        files |= {
            n: _node(rng, n.removeprefix("records/").removesuffix(".yaml").removesuffix("-new"))
            for n in changed
        }
        patched = before.patched(files, changed)
        fresh = DependencyGraph(files)
        for index in INDEXES:
            assert getattr(patched, index) == getattr(fresh, index), index
        assert patched.affected(changed, before) == fresh.affected(changed, before)
        some = set(rng.sample(sorted(files), 4))
        assert patched.load_set(some, declared_reads()) == fresh.load_set(some, declared_reads())
    assert before.files is disk  # the disk's graph is left as it was
    assert all(getattr(before, index) == getattr(DependencyGraph(disk), index) for index in INDEXES)
