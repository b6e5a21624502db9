"""Whether the site's shadow renderers are worth their lines (issue 34, item 4).

    python bench/shadow_renderers.py                  # shipped records and 1,000 synthetic
    python bench/shadow_renderers.py --sizes 0        # shipped records only
    python bench/shadow_renderers.py --repeat 5

kb renders two things in Python that a template would render: the shared
partials (kb/sitegen/html_nodes.py, in place of the Jinja macros
tests/site/fixtures/macros_before.html) and a chart's figure
(kb/sitegen/html_chart.py, in place of tests/site/fixtures/chart_before.html).
A third, kb/sitegen/json_text.py (json.dumps(indent=2)'s bytes, sooner), was
measured here at +1.3% of a cold build's CPU at 1,000 records and removed.

This builds the whole site cold, in one process ($KB_JOBS=1, so CPU time is the
build's), once with every shadow in place and once with each one replaced by its
plain route, and prints the CPU seconds of each build (the least of `--repeat`
runs, the machine being shared) and whether every file of the site is byte for
byte the same. The plain macros are imported once per page root here, where the
templates imported them once per page: the plain route is, if anything, timed
a little fast. Timing is reported, never judged.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ["KB_JOBS"] = "1"  # one process: process_time is the whole build's CPU

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "site" / "fixtures"
sys.path.insert(0, str(REPO / "bench"))

import jinja2  # noqa: E402
from markupsafe import Markup  # noqa: E402

from kb.api import open_kb, validate  # noqa: E402
from kb.model import KnowledgeBase  # noqa: E402
from kb.sitegen import build as build_module  # noqa: E402
from kb.sitegen import html_nodes  # noqa: E402

SHADOWS = ("html_nodes", "html_chart")
MACROS = ("link", "badge", "parts", "prose", "node", "state")


def _with_fixtures(env: jinja2.Environment) -> None:
    env.loader = jinja2.ChoiceLoader(
        [env.loader or jinja2.BaseLoader(), jinja2.FileSystemLoader(str(FIXTURES))]
    )


def _plain_partials(env: jinja2.Environment) -> None:
    """The globals link, badge, ... as the Jinja macros they replaced."""
    _with_fixtures(env)
    for name in html_nodes.GLOBALS:
        env.globals.pop(name)
    template = env.get_template("macros_before.html")
    modules: dict[str, Any] = {}

    def module(root: str) -> Any:
        if root not in modules:
            modules[root] = template.make_module({"root": root})
        return modules[root]

    def global_of(name: str) -> Callable[..., Any]:
        @jinja2.pass_context
        def call(context: Any, *args: Any) -> Any:
            return getattr(module(context["root"]), name)(*args)

        return call

    for name in MACROS:
        env.globals[name] = global_of(name)


def _plain_chart(env: jinja2.Environment) -> None:
    """The global chart_figure as the partial _chart.html it replaced."""
    _with_fixtures(env)
    partial = env.from_string('{% include "chart_before.html" %}')
    env.globals["chart_figure"] = lambda chart: Markup(partial.render(chart=chart))


@contextmanager
def plain(routes: frozenset[str]) -> Iterator[None]:
    """Build with the plain route in place of each shadow named in `routes`."""
    original_env = build_module.make_environment

    def environment(theme: Path) -> jinja2.Environment:
        env = original_env(theme)
        if "html_nodes" in routes:
            _plain_partials(env)
        if "html_chart" in routes:
            _plain_chart(env)
        return env

    build_module.make_environment = environment  # type: ignore[assignment]
    try:
        yield
    finally:
        build_module.make_environment = original_env  # type: ignore[assignment]


def cpu_build(kb: KnowledgeBase, out: Path, routes: frozenset[str]) -> float:
    with plain(routes):
        started = time.process_time()
        build_module.build(kb, out)
        return time.process_time() - started


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def compare(label: str, records: Path, work: Path, repeat: int) -> bool:
    kb = open_kb(records, checked=validate(records, remember=False))
    variants: dict[str, frozenset[str]] = {
        "all shadows (as shipped)": frozenset(),
        **{f"plain {name}": frozenset({name}) for name in SHADOWS},
        "plain routes only": frozenset(SHADOWS),
    }
    cpu_build(kb, work / f"{label}-warm", frozenset())  # analyses and memos, once for all
    best: dict[str, float] = {}
    sites: dict[str, dict[str, bytes]] = {}
    for run in range(repeat):
        for name, routes in variants.items():
            out = work / f"{label}-{name.replace(' ', '_')}-{run}"
            seconds = cpu_build(kb, out, routes)
            best[name] = min(best.get(name, seconds), seconds)
            if run == 0:
                sites[name] = files_of(out)
    base = best["all shadows (as shipped)"]
    shipped = sites["all shadows (as shipped)"]
    same_all = True
    print(
        f"{label}: {len(kb)} records, {len(shipped)} files; CPU s of a cold build, best of {repeat}"
    )
    for name, seconds in best.items():
        same = sites[name] == shipped
        same_all &= same
        print(
            f"  {name:26s} {seconds:7.2f} s  {seconds - base:+6.2f} s"
            f" ({(seconds / base - 1) * 100:+5.1f}%)  site {'identical' if same else 'DIFFERS'}"
        )
    return same_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000", help="synthetic sizes, comma separated; 0: none")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-shipped", action="store_true", help="synthetic corpora only")
    args = parser.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory(prefix="kb-shadows-") as tmp:
        work = Path(tmp)
        if not args.no_shipped:
            ok &= compare("shipped", REPO / "records", work, args.repeat)
        from make_corpus import write_corpus

        for n in (int(s) for s in args.sizes.split(",") if s and int(s) > 0):
            write_corpus(n, work / f"corpus-{n}")
            ok &= compare(f"synthetic-{n}", work / f"corpus-{n}" / "records", work, args.repeat)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
