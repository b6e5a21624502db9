"""kb's import graph has no cycle, and no import climbs from a lower layer to a higher one.

The graph is every `import` of every module of kb/: at module level, under
`if TYPE_CHECKING:` (a type named is a dependency a reader must follow all the same)
and inside functions (an import deferred to save start-up time is still one). Its
nodes are modules, not packages, so a knot inside one package shows too.

The layers, bottom to top, are tests/project/test_layers.py's (one table for both
tests); that test reads run-time imports only, this one every import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.project.test_layers import LAYERS, REPO

# Knots kb still has (none: the ledger's reader and the site's `Site` moved into
# modules of their own, below their users). A knot listed here must exist: the test
# fails on a listed knot that is gone, so the list only shrinks.
KNOWN_KNOTS: frozenset[frozenset[str]] = frozenset()


def modules() -> dict[str, Path]:
    """Every module of kb/, by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((REPO / "kb").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        found[".".join(p for p in parts if p != "__init__")] = path
    return found


def _imported(
    module: str, path: Path, node: ast.Import | ast.ImportFrom, known: dict[str, Path]
) -> Iterator[str]:
    """The modules one import statement reads.

    `from p import m` reads module p.m when there is one (the package p runs first,
    as for any import of p.m, but what is read is m's); else it reads p's names.
    """
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:  # relative: from the package holding `module`
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = ".".join([*package[: len(package) - node.level + 1], *filter(None, [node.module])])
    else:
        base = node.module or ""
    for alias in node.names:
        yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base


def import_graph() -> dict[str, set[str]]:
    """Each kb module and the kb modules it imports, anywhere in its text."""
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for module, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[module].update(
                    name for name in _imported(module, path, node, known) if name in known
                )
        graph[module].discard(module)
    return graph


def knots(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
            elif step not in index:
                index[step] = low[step] = len(index)
                stack.append(step)
                on_stack.add(step)
                work.append((step, iter(sorted(graph[step]))))
            elif step in on_stack:
                low[node] = min(low[node], index[step])
    return found


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return 0
    assert parts[1] in LAYERS, f"kb.{parts[1]} has no layer: add it to test_layers.LAYERS"
    return LAYERS[parts[1]]


def test_the_knot_finder_finds_a_knot() -> None:
    # The finder itself: a cycle of three, a self-contained chain and a two-cycle.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": set(), "f": {"g"}}
    graph["g"] = {"f"}
    assert sorted(map(sorted, knots(graph))) == [["a", "b", "c"], ["f", "g"]]
    assert knots({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_type_only_and_deferred_imports() -> None:
    graph = import_graph()
    assert "kb.model" in graph["kb.kinds"]  # a module-level import
    assert "kb.equations.planbuild" in graph["kb.equations.engine"]  # inside a function
    assert "kb.ledger.reader" in graph["kb.ledger.transfers"]  # under TYPE_CHECKING


def test_no_import_cycle() -> None:
    found = set(knots(import_graph()))
    new = sorted(sorted(knot) for knot in found - KNOWN_KNOTS)
    assert not new, "import cycles:\n" + "\n".join(" -> ".join(knot) for knot in new)
    gone = sorted(sorted(knot) for knot in KNOWN_KNOTS - found)
    assert not gone, f"undone, so take them out of KNOWN_KNOTS: {gone}"


def test_no_import_climbs_a_layer() -> None:
    climbs = [
        f"{module} (layer {layer(module)}) imports {name} (layer {layer(name)})"
        for module, names in sorted(import_graph().items())
        for name in sorted(names)
        if layer(name) > layer(module)
    ]
    assert not climbs, "imports from a lower layer to a higher one:\n" + "\n".join(climbs)
