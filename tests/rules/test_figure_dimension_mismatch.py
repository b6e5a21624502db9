"""SC002: every quantity field declares a dimension, and a figure in another dimension is a finding.

The fixtures put a capacity in TB/s, a bandwidth in GiB and a power in J into every
record kind that has such a field (accelerator, interconnect, placement, receipt) and
expect one SC002 at the figure's line, in kb's words; the same records with units of
the right dimension pass clean.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.api import validate
from kb.dimensions import (
    KEY,
    declared,
    dimension_templates,
    figures,
    quantity_fields,
    undeclared,
)
from kb.model import KIND_BY_FOLDER
from kb.quantities import parse_unit
from kb.schema import load_schemas
from tests.conftest import write_tree

KINDS = sorted(set(KIND_BY_FOLDER.values()))

HEAD = """version: 1
status: draft
history:
  - {version: 1, date: "2026-12-06", change: First encoding.}
"""

SOURCE = (
    "kind: source\nid: sources/doc\ntitle: A document\n" + HEAD + "publisher: Someone\n"
    "source_type: benchmark\n"
)
MODEL = (
    "kind: model\nid: models/tiny\ntitle: A tiny model\n" + HEAD + "geometry:\n"
    "  basis: unverified\n  d_model: 64\n  layers: 2\n"
)
LINK = (
    "kind: interconnect\nid: interconnects/link\ntitle: A link\n" + HEAD + "family: Ethernet\n"
    "topology: switched\nbandwidth:\n"
    "  per_link: {value: 50, unit: <LINK_BW>, basis: unverified}  # LINK_BW\n"
    "latency: {value: 10, unit: us, basis: unverified}\n"
)
CHIP = (
    "kind: accelerator\nid: hardware/chip\ntitle: A chip\n" + HEAD + "vendor: Someone\n"
    "memory:\n"
    "  capacity: {value: 128, unit: <CAP>, basis: unverified}  # CAP\n"
    "  bandwidth: {value: 8, unit: <BW>, basis: unverified}  # BW\n"
    "links:\n"
    "  - interconnect: interconnects/link\n"
    "    per_link: {value: 50, unit: <LINK_BW>, basis: unverified}  # LINK_BW\n"
    "power: {value: 700, unit: <POWER>, basis: unverified}  # POWER\n"
)
PLACEMENT = (
    "kind: placement\nid: placements/p\ntitle: One host against two\n" + HEAD + "envelope:\n"
    "  model: models/tiny\n  precision: bf16\n  quality: same weights\n  batch: 1\n"
    "  state_bytes: {value: 100, unit: GB, basis: unverified}\n"
    "  useful_work: {value: 100, unit: GB, basis: unverified}\n"
    "reference:\n"
    "  name: one-host\n"
    "  devices:\n"
    "    - name: big\n"
    "      capacity: {value: 128, unit: <CAP>, basis: unverified}  # CAP\n"
    "  useful:\n"
    "    rate: {value: 500, unit: <BW>, basis: unverified}  # BW\n"
    "  power: {value: 700, unit: <POWER>, basis: unverified}  # POWER\n"
    "candidates:\n"
    "  - name: two-hosts\n"
    "    devices:\n"
    "      - {name: small, count: 2, capacity: {value: 100, unit: GB, basis: unverified}}\n"
    "    state_shards: 2\n"
    "    useful:\n"
    "      rate: {value: 500, unit: GB/s, basis: unverified}\n"
    "      parallel: 2\n"
)
RECEIPT = (
    "kind: receipt\nid: receipts/run\ntitle: A run\n" + HEAD + "source: sources/doc\n"
    "evidence_class: benchmark\nengine: {name: nccl-tests}\npattern: all-reduce\n"
    "provenance:\n"
    "  hardware_firmware: 8x H100 SXM\n  topology_direction: NVSwitch\n"
    "  message_sizes: 1 GiB\n  model_precision: n/a\n  batch_concurrency: n/a\n"
    "  warmup: not reported\n  repetitions: not reported\n  quality_check: not reported\n"
    "  failures_retries: not reported\n  raw_artifact: not reported\n"
    "results:\n"
    "  - message_size: {value: 1, unit: GiB, basis: measured, source: sources/doc}\n"
    "    bus_bandwidth: {value: 480, unit: <BW>, basis: measured, source: sources/doc}  # BW\n"
)

TREES = {
    "accelerator": {"hardware/chip.yaml": CHIP, "interconnects/link.yaml": LINK},
    "interconnect": {"interconnects/link.yaml": LINK},
    "placement": {"placements/p.yaml": PLACEMENT, "models/tiny.yaml": MODEL},
    "receipt": {"receipts/run.yaml": RECEIPT, "sources/doc.yaml": SOURCE},
}
RIGHT = {"<CAP>": "GiB", "<BW>": "TB/s", "<LINK_BW>": "GB/s", "<POWER>": "W"}
WRONG = {"<CAP>": "TB/s", "<BW>": "GiB", "<LINK_BW>": "GiB", "<POWER>": "J"}
WORDS = {
    "<CAP>": "holds a size in bytes, but 128 TB/s is a bandwidth (bytes per second)",
    "<BW>": "GiB is a size in bytes",
    "<LINK_BW>": "holds a bandwidth (bytes per second), but 50 GiB is a size in bytes",
    "<POWER>": "power holds a power (watts), but 700 J is an energy (joules)",
}


def _tree(kind: str, units: dict[str, str]) -> dict[str, str]:
    out = {}
    for path, text in TREES[kind].items():
        for marker, unit in units.items():
            text = text.replace(marker, unit)
        out[path] = text
    return out


def _line_of(text: str, marker: str) -> int:
    tag = "# " + marker.strip("<>")
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.endswith(tag))


def _run(tmp: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    root = write_tree(tmp / "records", files)
    result = validate(root, remember=False)
    return [
        (Path(f.location.path).relative_to("records").as_posix(), f.location.line, f.message)
        for f in result.findings
        if f.code == "SC002"
    ]


@pytest.mark.parametrize("kind", sorted(TREES))
def test_right_dimensions_pass_clean(kind: str, in_tmp: Path) -> None:
    root = write_tree(in_tmp / "records", _tree(kind, RIGHT))
    findings = validate(root, remember=False).findings
    assert [f for f in findings if f.severity.value == "error"] == [], [
        f"{f.location}: {f.code} {f.message}" for f in findings
    ]


@pytest.mark.parametrize("kind", sorted(TREES))
def test_each_wrong_dimension_is_a_finding_at_the_figure(kind: str, in_tmp: Path) -> None:
    files = _tree(kind, WRONG)
    got = _run(in_tmp, files)
    expected = []
    for path, template in TREES[kind].items():
        for marker in WRONG:
            if marker in template:
                expected.append((path, _line_of(files[path], marker), WORDS[marker]))
    assert len(expected) >= 1
    assert sorted((p, n) for p, n, _ in got) == sorted((p, n) for p, n, _ in expected), got
    for path, line, words in expected:
        message = next(m for p, n, m in got if (p, n) == (path, line))
        assert words in message, message


def test_unknown_unit_is_a_finding_with_kbs_hint(in_tmp: Path) -> None:
    files = _tree("interconnect", {"<LINK_BW>": "GBps"})
    root = write_tree(in_tmp / "records", files)
    findings = [f for f in validate(root, remember=False).findings if f.code == "SC002"]
    assert len(findings) == 1
    assert "bandwidth.per_link" in findings[0].message
    assert "not one kb knows" in findings[0].message
    assert findings[0].hint == "write GB/s"


def test_a_binding_in_a_figure_field_is_not_checked_here(in_tmp: Path) -> None:
    """A placement capacity bound to another record is checked where that figure is written."""
    data = {"reference": {"devices": [{"capacity": "hardware/chip#memory.bandwidth"}]}}
    assert list(figures("placement", data)) == []


@pytest.mark.parametrize("kind", KINDS)
def test_every_quantity_field_declares_a_dimension(kind: str) -> None:
    missing = ["/".join(path) for path in undeclared(kind)]
    assert not missing, f"{kind}: quantity fields without {KEY}: {missing}"


@pytest.mark.parametrize("kind", KINDS)
def test_every_declaration_stands_on_a_quantity_field(kind: str) -> None:
    fields = set(quantity_fields(kind))
    stray = ["/".join(path) for path, _ in dimension_templates(kind) if path not in fields]
    assert not stray, f"{kind}: {KEY} on fields that hold no figure: {stray}"


def test_the_walk_finds_the_fields_it_must() -> None:
    """The schema walk itself: fields known to hold figures are found, with their dimension."""
    table = {kind: dict(dimension_templates(kind)) for kind in KINDS}
    expect = {
        ("accelerator", ("memory", "capacity")): "B",
        ("accelerator", ("links", "*", "per_link")): "B/s",
        ("accelerator", ("power",)): "W",
        ("interconnect", ("latency",)): "s",
        ("placement", ("reference", "devices", "*", "capacity")): "B",
        ("placement", ("candidates", "*", "power")): "W",
        ("receipt", ("results", "*", "bus_bandwidth")): "B/s",
        ("model", ("derived", "*")): "1",
        ("flop_class", ("arithmetic_intensity",)): "FLOP/B",
    }
    for (kind, path), unit in expect.items():
        assert table[kind][path].dims == (parse_unit(unit).dims,), (kind, path)
    assert table["flop_class"][("claims", "*", "bind", "*")].any
    assert len(quantity_fields("accelerator")) == 27  # 25 + reference_node devices and ports


def test_every_declaration_in_every_schema_file_parses() -> None:
    """Including schema files reached only through $ref (defs, equations)."""
    count = 0

    def walk(node: object) -> None:
        nonlocal count
        if isinstance(node, dict):
            if KEY in node:
                declared(node[KEY])
                count += 1
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    for schema in load_schemas().values():
        walk(schema)
    assert count >= 50


@pytest.mark.parametrize("bad", ["", [], ["*", "B"], "TBps", 3])
def test_a_malformed_declaration_is_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        declared(bad)


def test_exported_schemas_carry_the_declarations() -> None:
    """`kb schemas export` (what editors read) keeps each field's dimension."""
    import json

    from kb.schema_export import exported_text

    doc = json.loads(exported_text("accelerator.schema.json", None))
    assert doc["properties"]["memory"]["properties"]["capacity"][KEY] == "B"
    assert doc["properties"]["power"][KEY] == "W"


def test_the_walk_reports_a_field_that_loses_its_declaration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The completeness test can fail: drop one declaration and the walk names that field."""
    import copy

    import kb.dimensions as dimensions

    schemas = copy.deepcopy(load_schemas())
    capacity = schemas["accelerator.schema.json"]["properties"]["memory"]["properties"]["capacity"]
    del capacity[KEY]
    monkeypatch.setattr(dimensions, "load_schemas", lambda: schemas)
    dimensions.dimension_templates.cache_clear()
    dimensions.quantity_fields.cache_clear()
    try:
        assert undeclared("accelerator") == [("memory", "capacity")]
    finally:
        dimensions.dimension_templates.cache_clear()
        dimensions.quantity_fields.cache_clear()


def test_a_malformed_declaration_in_a_schema_is_named_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A schema brought with KB_SCHEMAS may declare nonsense: kb names the schema and field."""
    import copy

    import kb.dimensions as dimensions
    from kb.resources import ResourceMissing

    schemas = copy.deepcopy(load_schemas())
    schemas["accelerator.schema.json"]["properties"]["power"][KEY] = "TBps"
    monkeypatch.setattr(dimensions, "load_schemas", lambda: schemas)
    dimensions.dimension_templates.cache_clear()
    try:
        with pytest.raises(ResourceMissing, match="accelerator.schema.json, field power"):
            dimension_templates("accelerator")
    finally:
        dimensions.dimension_templates.cache_clear()
