"""The folder tree is the architecture: imports flow one way.

model/findings -> loader/schema/equations -> ledger -> rules -> checker -> report/site
-> commands -> cli. A module may import only from its own layer or below.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LAYERS: dict[str, int] = {
    "findings": 0,
    "model": 0,
    "workers": 0,
    "resources": 0,
    "usage": 0,
    "overlay": 0,
    "suggest": 0,
    "yamlsafe": 1,
    "yamladvice": 1,
    "positions": 1,
    "loader": 1,
    "schema": 1,
    "schema_export": 1,
    "references": 1,
    "gitbase": 1,
    "recordcache": 1,
    "snapshot": 1,
    "equations": 1,
    "prose": 1,
    "ledger": 2,
    "rules": 3,
    "checker": 4,
    "incremental": 4,
    "report": 5,
    "sitegen": 5,
    "knowledge_diff": 5,
    "lsp": 6,
    "commands": 6,
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
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
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
