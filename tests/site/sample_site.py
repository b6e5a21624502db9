"""The records the site's rebuild tests build per push: every template, every kind of edge.

A rebuild re-renders a page when a record it reads changed (kb.sitegen.deps.PageInputs),
and each page reads along a few kinds of edge: a page of kind K reads in full the records
whose values it shows (`bound`), its referrers (`referrer`), the records its kind's page
reaches (`along`, PAGE_READS) and every record of a scanned kind (`scan`, PAGE_SCANS);
the titles of the others it references (`title`); a kind's index the titles its records
reference (`table`). Whether a rebuild equals a cold build and re-renders only the pages
whose inputs changed is a property of that tracking per kind of edge and of the templates,
not of how many records there are: a tree with every page template and every kind of edge
(how, page kind, input kind) the shipped records have exercises every path of it. The
sample is tests/sample.py's closure (every record the roots reference, copied unchanged)
of `ROOTS`: sample.py's two, the records the rebuild tests edit, and one record for each
kind of edge those miss (chosen once, greedily, by the fewest records added); 173 of the
446 shipped records. tests/site/test_sample_site.py holds, per push, that it has every
kind of edge the shipped records have, renders every template, and checks without error.
`KB_FULL=1` builds the shipped records instead (`write_records`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kb.model import KINDS, KnowledgeBase
from tests import sample

ROOTS = (
    *sample.ROOTS,
    # edited or read by tests/site/test_rebuild.py
    "flops/decode-weight-read",
    "hardware/google-tpu-v5e",
    "hardware/google-tpu-v5p",
    "sources/arxiv-gpipe",
    # one each for the kinds of edge the above lack (bound: proposal -> interconnect, ...)
    "flops/mesh-subgroup-collective",  # flop class binds an interconnect
    "placements/llama-3.1-70b-vllm-h100-tp8-vs-tp4-b64-8k",  # placement -> engine, flop class
    "placements/llama-3.1-405b-nvl72-tp16-vs-two-b200-nodes",  # placement binds an interconnect
    "proposals/move-llama-3.1-70b-tp-to-pcie",  # proposal binds a placement
    "interconnects/aws-neuronlink-v3",  # an interconnect links an accelerator's title
    "proposals/shard-llama-3.1-8b-across-two-hosts",  # proposal -> interconnect, placement title
    "models/llama-4-maverick",  # a model binds a model
    "flops/sched-tensor-parallel-crossover",  # a flop class links a receipt's title
    "hardware/nvidia-h800",  # an accelerator binds a receipt
)

Edge = tuple[str, str, str]  # (how, the page's kind, the input's kind)


def page_edges(kb: KnowledgeBase) -> set[Edge]:
    """Every kind of edge along which a page of `kb` reads another record (module docstring)."""
    from kb.reads import PAGE_READS
    from kb.sitegen.deps import PageInputs

    inputs = PageInputs(kb, "edges")
    graph = inputs.graph
    edges: set[Edge] = set()
    for record in kb:
        kind = record.kind
        edges |= {("bound", kind, graph.kind_of(t)) for t in inputs.bound(record.id)}
        edges |= {("referrer", kind, graph.kind_of(t)) for t in graph.referrers(record.id)}
        along = graph.along(record.id, PAGE_READS.get(kind, ()))
        edges |= {("along", kind, graph.kind_of(t)) for t in along}
        edges |= {("title", kind, graph.kind_of(t)) for t in inputs.record_inputs(record)[1]}
        edges |= {("scan", kind, scanned) for scanned in inputs.record_kinds(record)}
    for kind in KINDS:
        edges |= {("table", kind, graph.kind_of(t)) for t in inputs.table_inputs(kind)}
    return edges


def write_records(target: Path, *, full: bool, roots: tuple[str, ...] = ROOTS) -> Path:
    """The closure of `roots` (the shipped records with `full`) under `target`; returns it."""
    from tests.conftest import SHIPPED_RECORDS

    if full:
        shutil.copytree(SHIPPED_RECORDS, target)
        return target
    target.mkdir(parents=True, exist_ok=True)
    return sample.sample_copy(target, roots)


def seeded_records(root: Path, stores: Path, roots: tuple[str, ...] = ROOTS) -> Path:
    """`write_records` at `root`/records (KB_FULL=1: the shipped records), its stores seeded.

    `stores`: those one cold check of the shipped records left (the `shipped_stores`
    fixture, tests/warm.py); they spare the SymPy work of the first check, whose
    every file is still checked. Returns the records folder.
    """
    from tests.warm import seed

    seed(stores, root / ".kb-cache")
    return write_records(root / "records", full=sample.full(), roots=roots)


@contextmanager
def templates_loaded() -> Iterator[set[str]]:
    """The names of the templates this process loads meanwhile (pages, includes, imports)."""
    import jinja2

    loaded: set[str] = set()
    real = jinja2.Environment.get_template

    def logged(self: jinja2.Environment, name: object, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        loaded.add(str(name))
        return real(self, name, *args, **kwargs)  # type: ignore[arg-type]

    jinja2.Environment.get_template = logged  # type: ignore[method-assign]
    try:
        yield loaded
    finally:
        jinja2.Environment.get_template = real  # type: ignore[method-assign]
