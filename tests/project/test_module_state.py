"""No new module-level mutable state in kb/: a run's state is in its RunContext (kb.run).

CONTRIBUTING: what a run knows besides the records is in `kb.run`, never in a module
global. This test finds what could hold state between calls at module level: a
ContextVar, a threading.local, an empty mutable container (a table of constants is
never empty), and any `global` statement. Each one that exists is listed below with
what it holds; a new one fails, and so does a listed one that is gone (take it out).
None holds a run's state: that is passed (the RunContext, a parameter such as the
Spending a check charges or the Overlay a run reads, issue 34), never listed here.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.project.test_layers import REPO

MUTABLE_CALLS = {"ContextVar", "local", "list", "dict", "set", "defaultdict", "deque"}

KNOWN: dict[str, str] = {
    # the function and items a fork pool's children inherit (fork copies module globals)
    "kb/workers.py: global _ITEMS, _FUNCTION": "fork payload",
    # the document whose prose is being walked once for several readers (walked_once)
    "kb/prose/fields.py: global _ONCE": "a walk in progress",
    # one check's step budgets, per thread (kb.equations.work; threadbudget's helper thread)
    "kb/equations/work.py: _LOCAL": "per check",
    "kb/equations/threadbudget.py: _LOCAL": "per check",
    # the progress line being drawn; the display names a MathML rendering uses
    "kb/progress.py: _LINE": "display",
    "kb/sitegen/mathml.py: DISPLAY_NAMES": "display",
    # memos of pure functions of their arguments (the same answer in every run)
    "kb/sitegen/calculator.py: _SHAPES": "memo",
    "kb/sitegen/flop_chart.py: _FUNCTIONS": "memo",
    "kb/sitegen/html_nodes.py: _ESCAPED": "memo",
    "kb/yamlsafe.py: _RESOLVED": "memo",
    "kb/ledger/breakeven.py: _SOLVED": "memo",
    # EQ027's verdict per claim, keyed by everything it is computed from (text, claim, item,
    # the analysis result and the bound records' digests), bounded (KEPT_VERDICTS): an edit
    # in kb lsp re-checks only the claims it reaches (tests/lsp/test_claim_text_scoped.py)
    "kb/rules/eq_claim_text_number_mismatch.py: _VERDICTS": "memo",
}


def _empty(value: ast.expr, locals_: set[str]) -> bool:
    """A ContextVar, a thread-local (`locals_`: the module's subclasses), an empty container."""
    if isinstance(value, ast.List | ast.Set):
        return not value.elts
    if isinstance(value, ast.Dict):
        return not value.keys
    if isinstance(value, ast.Call):
        name = ast.unparse(value.func).split(".")[-1]
        return name in ("ContextVar", *locals_) or (name in MUTABLE_CALLS and not value.args)
    return False


def module_state(path: Path) -> list[str]:
    """`file: NAME` for each module-level holder of state, `file: global A, B` for each global."""
    shown = path.relative_to(REPO).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    locals_ = {
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base).split(".")[-1] == "local" for base in node.bases)
    }
    found = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        value = getattr(node, "value", None)
        if value is not None and _empty(value, locals_):
            found += [f"{shown}: {t.id}" for t in targets if isinstance(t, ast.Name)]
    found += [
        f"{shown}: global {', '.join(node.names)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Global)
    ]
    return found


def test_the_finder_finds_state() -> None:
    text = "import contextvars\nA = contextvars.ContextVar('a')\nB: list[int] = []\nC = (1, 2)\n"
    text += "D = {'k': 1}\ndef f():\n    global B\n"
    path = REPO / "kb" / "_probe_state.py"
    try:
        path.write_text(text, encoding="utf-8")
        assert module_state(path) == ["kb/_probe_state.py: A", "kb/_probe_state.py: B"] + [
            "kb/_probe_state.py: global B"
        ]
    finally:
        path.unlink()


def test_nothing_listed_is_run_state() -> None:
    assert "run state" not in KNOWN.values()


def test_no_new_module_state() -> None:
    found = {item for path in sorted((REPO / "kb").rglob("*.py")) for item in module_state(path)}
    new = sorted(found - KNOWN.keys())
    assert not new, "module-level state (a run's belongs in kb.run.RunContext):\n" + "\n".join(new)
    gone = sorted(KNOWN.keys() - found)
    assert not gone, f"gone, so take them out of KNOWN: {gone}"
