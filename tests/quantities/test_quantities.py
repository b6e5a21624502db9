"""kb.quantities, the one unit table: parsing, ambiguity, conversion, and every reader agreeing."""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Mapping
from fractions import Fraction

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kb import quantities
from kb.equations.bind import BindError, quantity
from kb.equations.dims import DimensionError, dims_of, equation_dims
from kb.ledger.quantities import Figure, QuantityError, dim_text, figure
from kb.quantities import (
    UnitError,
    convert,
    format_dims,
    make_dims,
    parse_unit,
)
from kb.sitegen.tables import sort_key
from tests.conftest import REPO, SHIPPED_RECORDS, load_yaml

TABLE = [
    ("B", 1, "B"),
    ("GB", 10**9, "B"),
    ("GiB", 2**30, "B"),
    ("Gbit", Fraction(10**9, 8), "B"),
    ("GB/s", 10**9, "B·s^-1"),
    ("Gbit/s", 125_000_000, "B·s^-1"),
    ("TB/s", 10**12, "B·s^-1"),
    ("TFLOP/s", 10**12, "FLOP·s^-1"),
    ("FLOP/B", 1, "B^-1·FLOP"),
    ("us", Fraction(1, 10**6), "s"),
    ("ns", Fraction(1, 10**9), "s"),
    ("ms", Fraction(1, 1000), "s"),
    ("W", 1, "J·s^-1"),
    ("USD/h", Fraction(1, 3600), "USD·s^-1"),
    ("1", 1, "1"),
    ("PiB", 2**50, "B"),
    ("EB", 10**18, "B"),
]


@pytest.mark.parametrize(("text", "factor", "dims"), TABLE)
def test_units_parse_exactly(text: str, factor: Fraction | int, dims: str) -> None:
    unit = parse_unit(text)
    assert unit.factor == factor
    assert format_dims(unit.dims) == dims


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("Gb", "Gbit"),
        ("b", "bit"),
        ("GBps", "GB/s"),
        ("Gbps", "Gbit/s"),
        ("mB", "MB"),
        ("KB", "KiB"),
        ("TFLOPS", "TFLOP/s"),
    ],
)
def test_ambiguous_spellings_are_refused_with_a_hint(text: str, hint: str) -> None:
    with pytest.raises(UnitError) as caught:
        parse_unit(text)
    assert hint in caught.value.hint


@pytest.mark.parametrize("text", ["furlong", "GB/s/", "__import__('os')", "B**99", "GB.real"])
def test_unknown_units_are_refused(text: str) -> None:
    with pytest.raises(UnitError):
        parse_unit(text)


def test_conversion_is_exact_and_checks_dimensions() -> None:
    assert convert(Fraction(335, 100), parse_unit("TB/s"), parse_unit("GB/s")) == 3350
    assert convert(Fraction(1), parse_unit("GiB"), parse_unit("MB")) == Fraction(2**30, 10**6)
    with pytest.raises(UnitError):
        convert(Fraction(1), parse_unit("GB"), parse_unit("GB/s"))


def _dims(**units: str) -> dict:
    return {name: parse_unit(text).dims for name, text in units.items()}


def test_dimension_checker_strict_rules() -> None:
    table = _dims(P="B", BW="GB/s", t="s", n="1", F="FLOP")
    tree = lambda text: ast.parse(text, mode="eval").body  # noqa: E731
    assert equation_dims(tree("t"), tree("2*P/BW + t"), table) == make_dims({"s": 1})
    for bad in ("P + t", "max(P, t)", "log(P)", "exp(t)", "n**P", "P**n", "t - t + P"):
        with pytest.raises(DimensionError):
            dims_of(tree(bad), table)
    assert dims_of(tree("sqrt(P*P)"), table) == make_dims({"B": 1})
    assert dims_of(tree("P**(1/2)"), table) == make_dims({"B": Fraction(1, 2)})


UNIT_NAMES = [
    "B",
    "kB",
    "GB",
    "GiB",
    "bit",
    "Gbit",
    "s",
    "ms",
    "us",
    "ns",
    "FLOP",
    "TFLOP",
    "W",
    "J",
    "USD",
    "h",
    "1",
]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(UNIT_NAMES), st.sampled_from(["*", "/"])), min_size=1, max_size=5
    )
)
def test_dimension_checker_agrees_with_unit_conversion(terms: list[tuple[str, str]]) -> None:
    symbols = {f"x{i}": parse_unit(unit).dims for i, (unit, _) in enumerate(terms)}
    expression = "1"
    unit_text = "1"
    for index, (unit, op) in enumerate(terms):
        expression += f" {op} x{index}"
        unit_text += f" {op} ({unit})"
    combined = parse_unit(unit_text)
    assert dims_of(ast.parse(expression, mode="eval").body, symbols) == combined.dims
    factor = Fraction(1)
    for unit, op in terms:
        factor = factor * parse_unit(unit).factor if op == "*" else factor / parse_unit(unit).factor
    assert combined.factor == factor
    value = Fraction(7, 3)
    base = parse_unit("1") if not combined.dims else None
    if base is not None:
        assert convert(value, combined, base) == value * factor


# ---- one table, every reader ---------------------------------------------------------


def _units_in(node: object, found: set[str]) -> None:
    """Every unit string of a record: quantity and symbol units, and `{...|unit}` templates."""
    if isinstance(node, Mapping):
        if isinstance(node.get("unit"), str):
            found.add(node["unit"])
        for value in node.values():
            _units_in(value, found)
    elif isinstance(node, list):
        for value in node:
            _units_in(value, found)
    elif isinstance(node, str):
        found.update(m.strip() for m in re.findall(r"\{[^{}|]+\|([^{}|]+)\}", node))


def _record_units() -> list[str]:
    found: set[str] = set()
    paths = [*SHIPPED_RECORDS.rglob("*.yaml"), *(REPO / "tests").rglob("*.yaml")]
    for path in sorted(paths):
        try:
            _units_in(load_yaml(path.read_text(encoding="utf-8")), found)
        except yaml.YAMLError:
            continue  # the loader's own cases: files that are not YAML at all
    return sorted(found)


RECORD_UNITS = _record_units()


def _readers_agree(unit: str) -> None:
    """The engine's binding, the ledger's figure and the site's sort key read `unit` alike."""
    engine = quantity({"value": 1, "unit": unit}, "unit")
    try:
        ledger: Figure | None = figure({"value": 1, "unit": unit}, "test")
    except QuantityError:
        ledger = None
    site = sort_key({"value": 1, "unit": unit})
    if isinstance(engine, BindError):
        assert ledger is None, f"{unit!r}: the ledger reads a unit the engine refuses"
        assert site == repr(1.0)
        return
    assert ledger is not None, f"{unit!r}: the ledger refuses a unit the engine reads"
    assert ledger.value == engine.value == parse_unit(unit).factor
    assert ledger.dim == dim_text(engine.dims)
    assert site == repr(float(engine.value))


def test_record_units_were_found() -> None:
    # the property below is only as good as its sample: the shipped records alone use dozens
    assert len(RECORD_UNITS) >= 20 and {"GB/s", "TFLOP/s", "us", "W"} <= set(RECORD_UNITS)


@pytest.mark.parametrize("unit", RECORD_UNITS)
def test_every_record_unit_reads_the_same_everywhere(unit: str) -> None:
    _readers_agree(unit)


_NAMES = [*UNIT_NAMES, "min", "kbit", "EB", "PiB", "kW", "Gb", "GBps", "furlong", "mB", "KB"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(_NAMES),
    st.lists(st.tuples(st.sampled_from(["*", "/"]), st.sampled_from(_NAMES)), max_size=3),
    st.sampled_from(["", "^2", "^-1"]),
)
def test_generated_units_read_the_same_everywhere(
    first: str, rest: list[tuple[str, str]], power: str
) -> None:
    _readers_agree(first + "".join(op + name for op, name in rest) + power)


def test_every_module_parses_units_with_kb_quantities() -> None:
    # no second parser hides behind the same name: each importer holds kb.quantities' own
    importers = []
    for path in sorted((REPO / "kb").rglob("*.py")):
        if "parse_unit" in path.read_text(encoding="utf-8") and path.name != "quantities.py":
            parts = path.relative_to(REPO).with_suffix("").parts
            importers.append(".".join(p for p in parts if p != "__init__"))
    assert "kb.equations.bind" in importers and "kb.sitegen.tables" in importers
    for name in importers:
        held = getattr(importlib.import_module(name), "parse_unit", quantities.parse_unit)
        assert held is quantities.parse_unit, name


@pytest.mark.parametrize("text", ["on", "GPUs", "furlong", "B/", "b", "(GB", "x" * 61, "GB**s"])
def test_a_kept_refusal_is_the_refusal_parsing_gives(text: str) -> None:
    """parse_unit keeps what it refused (prose asks again for the words after its numbers):
    each ask raises a new UnitError with the message and hint a fresh parse gives."""
    with pytest.raises(quantities.UnitError) as fresh:
        quantities._parsed_unit(text)
    raised = []
    for _ in range(2):
        with pytest.raises(quantities.UnitError) as kept:
            quantities.parse_unit(text)
        raised.append(kept.value)
        assert (str(kept.value), kept.value.hint) == (str(fresh.value), fresh.value.hint)
    assert raised[0] is not raised[1]
