"""Lines of kb's package spent on speed machinery, per module, classified (issue 14).

    python bench/lines.py [--root CHECKOUT]

For each module that exists for speed (the architecture review's section 1.8
list at 6835b74, plus the modules the consolidation added: store, reads,
fingerprint, gcpause, filelock) it prints two counts:

- `lines`: every line of the file (`wc -l`), the review's measure;
- `code`: lines that hold code: not blank, not only a comment, and not inside a
  docstring (a string literal that is the first statement of a module, class or
  function). A line holding code and a trailing comment counts.

Each module is classified below as speed-only (a full run without it gives the
same findings and pages, only slower), mostly speed (it also does work every run
needs) or not speed (it does no speed work, or no longer does), with a one-line
reason. The totals add speed-only and mostly-speed modules, as the review did.
A module of the list that the checkout does not have is printed as absent (it
was removed), never skipped. `--root` counts another checkout (e.g. the main
branch's) with this script's classification.
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

SPEED_ONLY, MOSTLY, NOT_SPEED = "speed-only", "mostly speed", "not speed"

# module -> (class, why): the declaration the totals follow.
MODULES: dict[str, tuple[str, str]] = {
    "kb/incremental.py": (SPEED_ONLY, "the snapshot route: re-checks only what a change reaches"),
    "kb/snapshot.py": (
        SPEED_ONLY,
        "the last run's files and findings, served when nothing changed",
    ),
    "kb/recordcache.py": (SPEED_ONLY, "per-file load, schema and local results kept between runs"),
    "kb/store.py": (SPEED_ONLY, "the one sharded on-disk store every cache writes through"),
    "kb/fingerprint.py": (SPEED_ONLY, "the one salt that invalidates every store when kb changes"),
    "kb/filelock.py": (SPEED_ONLY, "locks the stores against concurrent runs"),
    "kb/gcpause.py": (SPEED_ONLY, "pauses the garbage collector while a run allocates"),
    "kb/workers.py": (SPEED_ONLY, "fork pools that spread per-file and equations work on cores"),
    "kb/reads.py": (
        MOSTLY,
        "the declared dependency graph for partial runs; also the site's and kb show's referrers",
    ),
    "kb/equations/cache.py": (SPEED_ONLY, "equations results kept between runs"),
    "kb/equations/plan.py": (SPEED_ONLY, "replays a record's claims at new bound values, no SymPy"),
    "kb/equations/exact.py": (SPEED_ONLY, "exact evaluation of a plan's compiled trees"),
    "kb/equations/shared.py": (SPEED_ONLY, "work shared across records and workers in one run"),
    "kb/equations/parallel.py": (SPEED_ONLY, "the equations' own worker pool (review, 6835b74)"),
    "kb/equations/planbuild.py": (
        MOSTLY,
        "writes plans while checking; also the symbolic entry point every record takes once",
    ),
    "kb/equations/claimbase.py": (
        NOT_SPEED,
        "the one judge of numeric, effect and prediction claims, whichever path evaluated",
    ),
    "kb/equations/numtext.py": (
        NOT_SPEED,
        "kb's own number printer, which every judged claim value goes through",
    ),
    "kb/sitegen/deps.py": (SPEED_ONLY, "a page's inputs, for the incremental site build"),
    "kb/sitegen/html_nodes.py": (
        SPEED_ONLY,
        "the shared partials as Python, not Jinja macros: a cold build +40% CPU without it "
        "at 1,000 records, +16% shipped (bench/shadow_renderers.py)",
    ),
    "kb/sitegen/html_chart.py": (
        SPEED_ONLY,
        "a chart's figure as Python, not _chart.html: a cold build +8% CPU without it "
        "at 1,000 records and shipped (bench/shadow_renderers.py)",
    ),
    "kb/sitegen/json_text.py": (
        NOT_SPEED,
        "removed (session 11): json.dumps writes the same bytes, +1.3% of a cold build",
    ),
    "kb/sitegen/manifest.py": (SPEED_ONLY, "which pages the last build wrote, and from what"),
    "kb/sitegen/record_pages.py": (
        MOSTLY,
        "keeps unchanged pages and forks page rendering; also renders every record page",
    ),
}


@dataclass(frozen=True)
class Count:
    module: str
    lines: int
    code: int


def docstring_lines(tree: ast.AST) -> set[int]:
    """The line numbers inside docstrings (module, class and function)."""
    lines: set[int] = set()
    nodes = [tree, *ast.walk(tree)]
    for node in nodes:
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        first = body[0] if body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            end = first.end_lineno or first.lineno
            lines.update(range(first.lineno, end + 1))
    return lines


def code_lines(text: str) -> int:
    """Lines holding a token other than a comment, outside docstrings."""
    skip = docstring_lines(ast.parse(text))
    quiet = {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
    }
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in quiet:
            continue
        lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - skip)


def count(root: Path, module: str) -> Count | None:
    path = root / module
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    return Count(module, len(text.splitlines()), code_lines(text))


def report(root: Path) -> str:
    """The table, one row per module, and the totals per class."""
    rows = [f"{'module':<30} {'lines':>6} {'code':>6}  class         why"]
    totals: dict[str, list[int]] = {SPEED_ONLY: [0, 0], MOSTLY: [0, 0], NOT_SPEED: [0, 0]}
    for module, (kind, why) in MODULES.items():
        found = count(root, module)
        if found is None:
            rows.append(f"{module:<30} {'absent':>6} {'':>6}  {kind:<13} {why}")
            continue
        totals[kind][0] += found.lines
        totals[kind][1] += found.code
        rows.append(f"{module:<30} {found.lines:>6} {found.code:>6}  {kind:<13} {why}")
    rows.append("")
    for kind, (lines, code) in totals.items():
        rows.append(f"{kind:<30} {lines:>6} {code:>6}")
    speed = [totals[SPEED_ONLY][i] + totals[MOSTLY][i] for i in (0, 1)]
    rows.append(f"{'speed machinery (only + mostly)':<30} {speed[0]:>6} {speed[1]:>6}")
    package = [count(root, str(p.relative_to(root))) for p in sorted((root / "kb").rglob("*.py"))]
    whole = [sum(c.lines for c in package if c), sum(c.code for c in package if c)]
    share = ", ".join(f"{100 * s / w:.1f}%" for s, w in zip(speed, whole, strict=True))
    rows.append(f"{'package (kb/**/*.py)':<30} {whole[0]:>6} {whole[1]:>6}  speed share: {share}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    if not (args.root / "kb").is_dir():
        print(f"lines: {args.root} has no kb/ package", file=sys.stderr)
        return 2
    print(report(args.root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
