"""Models that compose: an equation that uses another record's equation by reference.

An `equations:` entry may be, instead of `{expr: ...}`,

    t_read: {uses: "flops/decode-weight-read#t_read", map: {P_model: P, s_w: s_elem}}

`compose(kb, record)` resolves every such entry before anything is checked: the
used equation's text, with each of its names renamed through `map` (a name not
in `map` keeps its name), becomes the entry's `expr`. The rest of the engine
then checks it like one of the record's own equations (parsed by expr.py,
dimension-checked in this record's symbols, cited by derivations and claims by
its local id), and because the resolved text is part of the record's equation
sections, every cache keyed by them (result, plan, family) changes when the used
equation does. Only names are renamed: the rest of the text stays byte for byte,
so exact literals stay exact. No SymPy here: this runs on every `kb validate`.

What is refused (the entry then stays without `expr`, and is not checked):
- EQ021: the used record has no equation with that id (a record that does not
  exist at all is RF001's dangling reference: `uses` is a reference);
- EQ022: the target is not a usable equation: no `id#equation` text (or an
  entry that also writes its own `expr`: one or the other), an entry
  that is itself a `uses` (compose from the original), or text that is not one
  well-formed `lhs = rhs` over the used record's declared symbols;
- EQ023: a name the used equation needs, after `map`, is not declared here, or
  `map` renames a name the used equation does not have;
- EQ024: a mapped symbol's unit here is not exactly its unit there (GB vs GiB,
  GB/s vs Gbit/s): the used equation was dimension-checked in its own units.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kb.equations import codes
from kb.equations.results import Issue
from kb.findings import Location, pointer_join
from kb.model import KnowledgeBase, Record, is_valid_id, split_binding
from kb.quantities import UnitError, parse_unit
from kb.run import Kept

MAX_TEXT = 1001  # the schema's bound on `expr`


@dataclass(frozen=True)
class Composed:
    """A record with every `uses` entry resolved, and what went wrong resolving them."""

    record: Record
    issues: tuple[Issue, ...] = ()


def is_use(spec: Any) -> bool:
    """True for an `equations:` entry written as `{uses: ...}`."""
    return isinstance(spec, Mapping) and "uses" in spec


def uses_specs(record: Record) -> list[tuple[str, Any]]:
    """(equation id, `uses` text) for every composed entry of the record."""
    equations = record.data.get("equations")
    if not isinstance(equations, Mapping):
        return []
    return [(str(eq_id), spec["uses"]) for eq_id, spec in equations.items() if is_use(spec)]


# What compose() gave each record object in this run of a frozen knowledge base (whose
# records, and so every record a `uses` reads, cannot change): the planner evaluates the
# same few classes for every mapping it prices. Keyed by id and identity of the record.
COMPOSED: Kept[dict[str, tuple[Record, Composed]]] = Kept("composed records")


def compose(kb: KnowledgeBase, record: Record) -> Composed:
    """Resolve the record's `uses` entries against `kb` (the record itself if it has none).

    A frozen knowledge base answers the same record object from its run's memo.
    """
    if not kb.frozen:
        return _compose(kb, record)
    known = kb.run.once(COMPOSED, dict)
    found = known.get(record.id)
    if found is None or found[0] is not record:
        found = known[record.id] = (record, _compose(kb, record))
    return found[1]


def _compose(kb: KnowledgeBase, record: Record) -> Composed:
    equations = record.data.get("equations")
    if not isinstance(equations, Mapping) or not any(map(is_use, equations.values())):
        return Composed(record)
    resolved: dict[str, Any] = {}
    issues: list[Issue] = []
    for eq_id, spec in equations.items():
        if is_use(spec):
            entry, found = _resolve(kb, record, str(eq_id), spec)
            resolved[eq_id] = entry
            issues.extend(found)
        else:
            resolved[eq_id] = spec
    data = {**record.data, "equations": resolved}
    return Composed(replace(record, data=data), tuple(issues))


def composed_data(kb: KnowledgeBase, record: Record) -> Mapping[str, Any]:
    """The record's data with `uses` resolved (for kb calc and the site's charts)."""
    return compose(kb, record).record.data


def _resolve(
    kb: KnowledgeBase, record: Record, eq_id: str, spec: Mapping[str, Any]
) -> tuple[dict[str, Any], list[Issue]]:
    entry = {key: value for key, value in spec.items() if key != "expr"}
    pointer = pointer_join("/equations", eq_id, "uses")
    target = spec.get("uses")
    if "expr" in spec:
        return entry, [
            Issue(
                codes.USES_TARGET_NOT_EQUATION,
                pointer_join("/equations", eq_id, "expr"),
                f"equation {eq_id}: write expr or uses, not both",
                "drop expr (kb takes the used text) or drop uses",
            )
        ]
    if not isinstance(target, str) or "#" not in target:
        return entry, [
            Issue(
                codes.USES_TARGET_NOT_EQUATION,
                pointer,
                f"equation {eq_id}: uses {target!r} is not <record id>#<equation id>",
                "write uses: flops/decode-weight-read#t_read",
            )
        ]
    record_id, used_id = split_binding(target)
    used = kb.get(record_id) if is_valid_id(record_id) else None
    if used is None:
        return entry, []  # RF001 reports the dangling reference; no second finding
    text, problem = _used_text(used, used_id, eq_id, target)
    if problem is not None:
        return entry, [replace(problem, pointer=pointer)]
    renamed, issues = _rename(record, used, eq_id, str(text), spec.get("map"))
    if renamed is not None and not issues:
        entry["expr"] = renamed
    return entry, issues


def _used_text(
    used: Record, used_id: str, eq_id: str, target: str
) -> tuple[str | None, Issue | None]:
    equations = used.data.get("equations")
    equations = equations if isinstance(equations, Mapping) else {}
    related = (Location(used.path, 0, 0, pointer_join("/equations", used_id)),)
    spec = equations.get(used_id)
    if spec is None:
        known = ", ".join(sorted(map(str, equations))) or "none"
        return None, Issue(
            codes.USES_TARGET_UNKNOWN,
            "",
            f"equation {eq_id}: {used.path} has no equation {used_id!r} (uses {target})",
            f"its equations: {known}",
        )
    if is_use(spec):
        return None, Issue(
            codes.USES_TARGET_NOT_EQUATION,
            "",
            f"equation {eq_id}: {target} itself uses {spec.get('uses')!r}",
            "use the original equation directly",
            related,
        )
    text = spec.get("expr") if isinstance(spec, Mapping) else spec
    if not isinstance(text, str) or len(text) > MAX_TEXT or text.count("=") != 1:
        return None, Issue(
            codes.USES_TARGET_NOT_EQUATION,
            "",
            f"equation {eq_id}: {target} is not one well-formed "
            "'lhs = rhs' (its own record reports why)",
            "fix the used equation",
            related,
        )
    return text, None


def _rename(
    record: Record, used: Record, eq_id: str, text: str, mapping: Any
) -> tuple[str | None, list[Issue]]:
    """The used text with names renamed, or None and the issues that forbid it."""
    base = pointer_join("/equations", eq_id)
    bad_shape = Issue(
        codes.USES_TARGET_NOT_EQUATION,
        pointer_join(base, "uses"),
        f"equation {eq_id}: the used equation {text!r} does not parse (its own record reports why)",
        "fix the used equation",
        (Location(used.path, 0, 0, "/equations"),),
    )
    sides = [_names(side) for side in text.split("=")]
    if any(side is None for side in sides):
        return None, [bad_shape]
    names = {name for side in sides for _, _, name in side or ()}
    mapping = mapping if isinstance(mapping, Mapping) else {}
    issues = [
        Issue(
            codes.USES_SYMBOL_UNDECLARED,
            pointer_join(base, "map", str(key)),
            f"equation {eq_id}: map renames {key!r}, which {used.id} does not use in this equation",
            f"its names: {', '.join(sorted(names))}",
        )
        for key in mapping
        if key not in names
    ]
    renames = {name: str(mapping.get(name, name)) for name in names}
    issues += _symbol_issues(record, used, eq_id, renames, mapping)
    if issues:
        return None, issues
    parts = [
        _substitute(side.strip(), found or [], renames)
        for side, found in zip(text.split("="), sides, strict=True)
    ]
    return " = ".join(parts), []


def _symbol_issues(
    record: Record, used: Record, eq_id: str, renames: Mapping[str, str], mapping: Mapping[Any, Any]
) -> list[Issue]:
    here, there = _symbols(record), _symbols(used)
    issues = []
    for name in sorted(renames):
        local = renames[name]
        pointer = pointer_join(
            "/equations", eq_id, *(("map", name) if name in mapping else ("uses",))
        )
        if local not in here:
            issues.append(
                Issue(
                    codes.USES_SYMBOL_UNDECLARED,
                    pointer,
                    f"equation {eq_id}: {used.id}'s {name} "
                    f"becomes {local}, which this record does not declare",
                    f"declare {local} under symbols: or map {name} to a declared symbol",
                )
            )
            continue
        mine, theirs = _unit(here[local]), _unit(there.get(name))
        if (
            mine is not None
            and theirs is not None
            and (mine.dims, mine.factor) != (theirs.dims, theirs.factor)
        ):
            issues.append(
                Issue(
                    codes.USES_UNIT_MISMATCH,
                    pointer,
                    f"equation {eq_id}: {local} is in "
                    f"{mine.text} here, {name} in {theirs.text} in {used.id}",
                    None,  # the rule module's HINT (kb/rules/eq_uses_unit_mismatch.py)
                    (Location(used.path, 0, 0, pointer_join("/symbols", name)),),
                )
            )
    return issues


def _symbols(record: Record) -> Mapping[str, Any]:
    symbols = record.data.get("symbols")
    return symbols if isinstance(symbols, Mapping) else {}


def _unit(spec: Any) -> Any:
    try:
        return parse_unit(spec.get("unit")) if isinstance(spec, Mapping) else None
    except UnitError:
        return None  # the record's own EQ003 reports it


def _names(side: str) -> list[tuple[int, int, str]] | None:
    """(start, end, name) of every symbol name in one side (not function names)."""
    text = side.strip()
    if not text or not text.isascii() or "\n" in text or "\r" in text:
        return None
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    calls = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return sorted(
        (node.col_offset, node.end_col_offset or node.col_offset, node.id)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and id(node) not in calls
    )


def _substitute(text: str, found: list[tuple[int, int, str]], renames: Mapping[str, str]) -> str:
    out, at = [], 0
    for start, end, name in found:
        out += [text[at:start], renames.get(name, name)]
        at = end
    out.append(text[at:])
    return "".join(out)
