"""The folder tree is the architecture: imports flow one way.

model/findings/quantities -> loader/schema/equations -> ledger -> rules -> checker ->
report/site -> commands -> cli. A module may import only from its own layer or below.
Units have one module, kb.quantities, at the bottom: the engine, the ledger, the prose
and the site all read it, and no other module keeps a prefix table.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYERS: dict[str, int] = {
    "findings": 0,
    "model": 0,
    "run": 0,
    "quantities": 0,
    "workers": 0,
    "gcpause": 0,
    "yamlwords": 0,
    "settings": 0,
    "store": 0,
    "filelock": 0,
    "fileread": 0,
    "fingerprint": 0,
    "resources": 0,
    "usage": 0,
    "overlay": 0,
    "suggest": 0,
    "numfmt": 0,
    "progress": 0,
    "outfile": 0,
    "yamlsafe": 1,
    "yamladvice": 1,
    "positions": 1,
    "loader": 1,
    "schema": 1,
    "kinds": 1,
    "schema_export": 1,
    "dimensions": 2,  # reads the schemas (kb.schema) and the unit table
    "references": 1,
    "gitbase": 1,
    "recordcache": 1,
    "snapshot": 1,
    "equations": 1,
    "prose": 1,
    "ledger": 2,
    "rules": 3,
    "plan": 3,  # the planner: scenarios priced by the ledger; LG011 reads it
    "reads": 3,
    "checker": 4,
    "incremental": 4,
    "report": 5,
    "api": 5,
    "sitegen": 5,
    "knowledge_diff": 5,
    "lsp": 6,
    "commands": 6,
    "toolconfig": 6,  # [tool.kb]: the command line's defaults, checked as its options are
    "cli": 7,
    "__main__": 8,
}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "kb":
        return None
    if len(parts) == 1:
        return 0
    assert parts[1] in LAYERS, f"kb.{parts[1]} has no layer: add it to LAYERS"
    return LAYERS[parts[1]]


def _imports(path: Path) -> list[str]:
    """The modules a file imports when it runs.

    A type-only import (under `if TYPE_CHECKING:`) names a type for the type checker
    and runs nothing, so it is left out.
    """
    names: list[str] = []
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_imports_flow_one_way() -> None:
    upward = []
    for path in sorted((REPO / "kb").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        module = ".".join(p for p in parts if p != "__init__")
        mine = _layer(module)
        for name in _imports(path):
            theirs = _layer(name)
            if mine is not None and theirs is not None and theirs > mine:
                upward.append(f"{module} imports {name}")
    assert not upward, "imports that flow upward:\n" + "\n".join(upward)


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted((REPO / "kb").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        found.append((".".join(p for p in parts if p != "__init__"), path))
    return found


def test_quantities_imports_nothing_from_kb() -> None:
    # The unit table sits below everything that reads it, so it can import none of them.
    path = REPO / "kb" / "quantities.py"
    assert [n for n in _imports(path) if n == "kb" or n.startswith("kb.")] == []


def test_one_unit_table() -> None:
    # A binary-prefix name as a string literal is the sign of a unit table: only one may exist.
    prefixes = {"Ki", "Mi", "Gi", "Ti", "Pi"}
    tables = []
    for module, path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in prefixes:
                tables.append(f"{module}:{node.lineno}")
    assert tables and all(t.startswith("kb.quantities:") for t in tables), tables
    assert not (REPO / "kb" / "equations" / "units.py").exists()


# The checker's routes into the pipeline, and the only modules that may take them:
# kb.api (every command, the language server, kb diff and the tests go through it)
# and kb.incremental (its snapshot route, which kb.api picks).
_ROUTES = {"check_everything", "build_knowledge_base", "run_rules", "execute"}
_ROUTE_TAKERS = {"kb.api", "kb.incremental"}


def _names_from_checker(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "kb.checker":
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute) and ast.unparse(node.value) == "checker":
            names.add(node.attr)
    return names


def test_one_route_into_the_core() -> None:
    import kb.checker

    assert not hasattr(kb.checker, "check") and not hasattr(kb.checker, "CheckResult")
    taken = [
        f"{module} takes {sorted(names)}"
        for module, path in _modules()
        if module not in _ROUTE_TAKERS and (names := _names_from_checker(path) & _ROUTES)
    ]
    assert not taken, "validation that bypasses kb.api:\n" + "\n".join(taken)
