"""A record's equation system: its declared symbols and its parsed, dimension-checked equations.

`build_system(data)` builds it from a record's `symbols` and `equations`.
`system_of(kb, data)` is the same System, built once per run for each distinct
text: the composed ledger and the planner evaluate the same flop classes for every
scenario they price (kb.ledger.workload, kb.equations.evaluate), and building
their systems again was most of a scenario's cost. The memo (`Systems`) is kept in
the run context (`kb.run`, under SYSTEMS), keyed by a hash of the (symbols,
equations) text, never by object identity, so an edited record is a new key; each
caller gets its own copy (System's lists are extended by the later steps), and a
system whose build a budget stopped is never kept.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sympy as sp

from kb.equations import codes
from kb.equations.claimbase import ClaimSink
from kb.equations.dims import DimensionError, equation_dims
from kb.equations.expr import (
    ExpressionError,
    ParsedEquation,
    make_symbol,
    parse_equation,
    parse_expression,
)
from kb.equations.results import CONSISTENT, INVALID, Item
from kb.findings import pointer_join
from kb.quantities import Dims, Unit, UnitError, format_dims, parse_unit
from kb.run import Kept, Spending

if TYPE_CHECKING:
    from kb.model import KnowledgeBase


@dataclass
class System(ClaimSink):
    """The symbols and equations of one record, plus what went wrong building them."""

    symbols: dict[str, sp.Symbol] = field(default_factory=dict)
    units: dict[str, Unit] = field(default_factory=dict)
    equations: dict[str, ParsedEquation] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    # What was derived from the equations (definitions, expansions): see `_remember`.
    derived: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def dims(self) -> dict[str, Dims]:
        return {name: unit.dims for name, unit in self.units.items()}

    def expression(self, text: Any, pointer: str) -> sp.Expr | None:
        """Parse an expression against the declared symbols, reporting failures."""
        try:
            return parse_expression(text, self.symbols).value
        except ExpressionError as exc:
            self.report_expression_error(exc, pointer)
            return None

    def report_expression_error(self, exc: ExpressionError, pointer: str, what: str = "") -> None:
        """EQ002 for an undeclared name (with the closest declared one), else EQ001.

        `what` names the item (`equation b_star: `) so the message says where.
        """
        if exc.reason == "undeclared":
            from kb.suggest import did_you_mean

            close = did_you_mean(exc.name, self.symbols)
            self.add(
                codes.SYMBOL_UNDECLARED,
                pointer,
                f"{what}{exc}",
                f"{close + ' If not, ' if close else ''}declare {exc.name} under symbols:"
                " with a meaning and a unit",
            )
        else:
            hint = (
                "complete the expression: an operator (* for a product, ** for a power) between"
                " every two operands, parentheses paired"
                if exc.reason == "syntax"
                else "use numbers, declared names, + - * / **, max min log exp sqrt ceil floor"
            )
            self.add(codes.EXPRESSION_UNSAFE, pointer, f"{what}{exc}", hint)

    def definitions(self) -> dict[sp.Symbol, sp.Expr]:
        """Symbols defined by exactly one equation `symbol = expression`."""
        return dict(self._remember(("definitions",), self._definitions))

    def _definitions(self) -> dict[sp.Symbol, sp.Expr]:
        seen: dict[sp.Symbol, list[sp.Expr]] = {}
        for equation in self.equations.values():
            lhs = equation.lhs.value
            if isinstance(lhs, sp.Symbol) and lhs not in equation.rhs.value.free_symbols:
                seen.setdefault(lhs, []).append(equation.rhs.value)
        return {symbol: found[0] for symbol, found in seen.items() if len(found) == 1}

    def expand(self, expression: sp.Expr, keep: Iterable[sp.Symbol] = ()) -> sp.Expr:
        """`algebra.expand_definitions(expression, self.definitions(), keep)`, remembered."""
        from kb.equations.algebra import expand_definitions

        kept = frozenset(keep)
        return self._remember(
            ("expand", expression, kept),
            lambda: expand_definitions(expression, self.definitions(), kept),
        )

    def text(self, expression: sp.Expr) -> str:
        """`expr.to_text(expression)`, remembered (an expansion's text, shown in a trail)."""
        from kb.equations.expr import to_text

        return str(self._remember(("text", expression), lambda: to_text(expression)))

    def _remember(self, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        """What `build` gives for this system's equations, kept in `derived` while they hold.

        Copies of one memoized system (`system_of`) share `derived`, so what one scenario
        derived another reuses; an entry holds the equations it was derived from, and is
        used only while the system holds the very same ones (a changed system derives anew).
        """
        stamp = tuple(self.equations.items())
        found = self.derived.get(key)
        if found is not None and _same(found[0], stamp):
            return found[1]
        value = build()
        if len(self.derived) >= MAX_DERIVED:
            self.derived.clear()
        self.derived[key] = (stamp, value)
        return value


MAX_DERIVED = 512  # what one system remembers (dropped whole past it)


def _same(a: tuple[tuple[str, Any], ...], b: tuple[tuple[str, Any], ...]) -> bool:
    if len(a) != len(b):
        return False
    return all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a, b, strict=True))


def build_system(data: Mapping[str, Any], run: Spending | None = None) -> System:
    """Declare the record's symbols and parse and dimension-check its equations.

    `run`: what its checks spend from (kb.equations.timeout; None, their own budgets).
    """
    system = System()
    _declare_symbols(system, data.get("symbols"))
    equations = data.get("equations")
    if isinstance(equations, Mapping):
        for eq_id, spec in equations.items():
            _add_equation(system, str(eq_id), spec)
        check_restatements(system, equations, run)
    return system


MAX_SYSTEMS = 1024  # distinct texts a run keeps (the memo is dropped whole past it)


def system_key(data: Mapping[str, Any]) -> str | None:
    """The content key of `data`'s system: a hash of its (symbols, equations) text.

    None when the text cannot be repr'd (a nesting too deep): such a record is built
    every time.
    """
    try:
        text = repr((data.get("symbols"), data.get("equations")))
    except Exception:  # a nesting too deep for repr: built every time
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Systems:
    """One run's memo of built systems by content key; `built` and `reused` count its use."""

    def __init__(self, run: Spending | None = None) -> None:
        self.run = run  # what the run's checks spend from (kb.run.RunContext.budget)
        self.known: dict[str, System] = {}
        self.built = 0
        self.reused = 0

    def of(self, data: Mapping[str, Any], key: str | None = None) -> System:
        """A fresh copy of the System of `data`, built once per distinct text.

        `key`: `system_key(data)` when the caller already has it (`stable_key`).
        """
        from kb.equations.timeout import budgets_stopped

        key = key if key is not None else system_key(data)
        known = self.known.get(key) if key is not None else None
        if known is None:
            before = budgets_stopped(self.run)
            known = build_system(data, self.run)
            self.built += 1
            if key is not None and budgets_stopped(self.run) == before:
                if len(self.known) >= MAX_SYSTEMS:
                    self.known.clear()
                self.known[key] = known
        else:
            self.reused += 1
        return copy_system(known)


SYSTEMS: Kept[Systems] = Kept("equation systems by their text")


def system_of(kb: KnowledgeBase, data: Mapping[str, Any]) -> System:
    """`build_system(data)`, memoized for the run of `kb` (see the module docstring)."""
    return kb.run.once(SYSTEMS, lambda: Systems(kb.run.budget)).of(data, stable_key(kb, data))


# The content keys of the data objects of a frozen knowledge base's run, by identity: its
# records (and the composed copies kb.equations.compose keeps for the run) never change,
# so the text of one object is hashed once, not at every evaluation the planner asks.
KEYS: Kept[dict[int, tuple[Mapping[str, Any], str | None]]] = Kept("system keys by object")


def stable_key(kb: KnowledgeBase, data: Mapping[str, Any]) -> str | None:
    """`system_key(data)`, kept for the same object when `kb` is frozen (else computed)."""
    if not kb.frozen:
        return system_key(data)
    known = kb.run.once(KEYS, dict)
    found = known.get(id(data))
    if found is None or found[0] is not data:
        if len(known) >= MAX_SYSTEMS:
            known.clear()
        found = known[id(data)] = (data, system_key(data))
    return found[1]


def copy_system(system: System) -> System:
    """A copy whose containers are its own (the symbols and parsed equations are immutable).

    The copies share `derived`: an entry is used only while the copy holds the very
    equations it was derived from.
    """
    return System(
        symbols=dict(system.symbols),
        units=dict(system.units),
        issues=list(system.issues),
        items=list(system.items),
        equations=dict(system.equations),
        failed=set(system.failed),
        derived=system.derived,  # shared: each entry is checked against the equations
    )


def _declare_symbols(system: System, symbols: Any) -> None:
    if not isinstance(symbols, Mapping):
        return
    for name, spec in symbols.items():
        pointer = pointer_join("/symbols", name)
        try:
            symbol = make_symbol(str(name))
        except ExpressionError as exc:
            system.add(
                codes.EXPRESSION_UNSAFE,
                pointer,
                f"symbol {exc}",
                "symbol names are plain identifiers",
            )
            continue
        unit_text = spec.get("unit") if isinstance(spec, Mapping) else None
        try:
            unit = parse_unit(unit_text)
        except UnitError as exc:
            system.add(
                codes.UNIT_UNKNOWN, pointer_join(pointer, "unit"), f"symbol {name}: {exc}", exc.hint
            )
            unit = None
        system.symbols[symbol.name] = symbol
        if unit is not None:
            system.units[symbol.name] = unit


def _add_equation(system: System, eq_id: str, spec: Any) -> None:
    if isinstance(spec, Mapping) and "uses" in spec:
        if "expr" not in spec:  # compose.py could not resolve it and said why
            system.failed.add(eq_id)
            return
        pointer = pointer_join("/equations", eq_id, "uses")
    else:
        pointer = (
            pointer_join("/equations", eq_id, "expr")
            if isinstance(spec, Mapping)
            else (pointer_join("/equations", eq_id))
        )
    text = spec.get("expr") if isinstance(spec, Mapping) else spec
    try:
        parsed = parse_equation(text, system.symbols)
    except ExpressionError as exc:
        system.report_expression_error(exc, pointer, f"equation {eq_id}: ")
        system.failed.add(eq_id)
        return
    if any(name not in system.units for name in _names(parsed)):
        system.equations[eq_id] = parsed  # the bad unit is reported once, at the symbol
        return
    try:
        dims = equation_dims(parsed.lhs.tree, parsed.rhs.tree, system.dims)
    except DimensionError as exc:
        system.add(
            codes.DIMENSION_MISMATCH,
            pointer,
            f"equation {eq_id} ({parsed.source}): {exc}",
            "make both sides the same unit; bytes per element is a symbol with unit B",
        )
        system.items.append(Item("equation", eq_id, pointer, INVALID, str(exc)))
        system.failed.add(eq_id)
        return
    system.equations[eq_id] = parsed
    system.items.append(
        Item(
            "equation",
            eq_id,
            pointer,
            CONSISTENT,
            f"dimensionally consistent ({format_dims(dims)})",
        )
    )


def _names(parsed: ParsedEquation) -> set[str]:
    """Symbol names as authored (SymPy may have cancelled some)."""
    trees = (parsed.lhs.tree, parsed.rhs.tree)
    calls = {id(n.func) for t in trees for n in ast.walk(t) if isinstance(n, ast.Call)}
    return {
        n.id for t in trees for n in ast.walk(t) if isinstance(n, ast.Name) and id(n) not in calls
    }


def check_restatements(
    system: System, equations: Mapping[str, Any], run: Spending | None = None
) -> None:
    """EQ025: a used equation `X = f` and another `X = g` here must agree identically.

    See kb/rules/eq_uses_disagrees.py for the definition.
    """
    from kb.equations.algebra import NONZERO, decide_zero

    used = [
        eq_id
        for eq_id, spec in equations.items()
        if isinstance(spec, Mapping) and "uses" in spec and eq_id in system.equations
    ]
    for use_id in used:
        lhs = system.equations[use_id].lhs.value
        if not isinstance(lhs, sp.Symbol):
            continue
        for eq_id, parsed in system.equations.items():
            if (
                eq_id == use_id
                or parsed.lhs.value != lhs
                or (eq_id in used and used.index(eq_id) < used.index(use_id))
            ):
                continue  # each pair once
            verdict = decide_zero(system.equations[use_id].rhs.value - parsed.rhs.value, run)
            if verdict.outcome == NONZERO and verdict.counterexample:
                spec = equations[eq_id]
                field = ("uses" if "uses" in spec else "expr",) if isinstance(spec, Mapping) else ()
                system.add(
                    codes.USES_DISAGREES,
                    pointer_join("/equations", str(eq_id), *field),
                    f"equations {use_id} (uses {equations[use_id]['uses']}) and "
                    f"{eq_id} give {lhs} differently: {verdict.describe()}",
                    f"keep one: drop {eq_id} and cite {use_id}, or correct the one that is wrong",
                )
