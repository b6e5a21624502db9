"""`kb build [--out DIR] [--no-plans]`: validate, then write the static reference site.

A knowledge base with errors is never published: the findings are printed and
the command exits 1, leaving any previous site untouched. The site is written to
a staging folder and published only when complete (the changed files renamed
over the published ones, or a first build swapped in whole: kb.sitegen.output);
pages whose input records did not change since the last build are kept, not
rendered again. The site has the placement explorer and the planner's worked
tables unless `--no-plans` (kb.sitegen.explorer.DEFAULT_MENUS). On a terminal,
stderr shows the validation's stages (kb.progress), then a progress bar follows
the record pages.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kb.commands._common import records_root, require_dir, root_option
from kb.findings import Finding, Severity

if TYPE_CHECKING:
    from kb.model import KnowledgeBase
    from kb.sitegen.build import BuildReport


@click.command("build")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("_site"),
    show_default=True,
    help="Folder to write the site to.",
)
@click.option(
    "--site-url",
    metavar="URL",
    default=None,
    help="Where the site is published: the schemas get $ids under URL/schemas/.",
)
@click.option(
    "--plans/--no-plans",
    default=True,
    show_default=True,
    help="Write the placement explorer and the planner's worked tables (the default; "
    "--no-plans leaves them out): kb plan prices every question of their menus at build "
    "time, for at most 24 models (those the most records name; the site lists the others). "
    "A cold build of the shipped tree takes about four times the CPU with them as "
    "without (about 70 s of CPU against 17 s in one process). "
    "Each model's answers are kept in kb's store (.kb-cache) while their inputs are "
    "unchanged, so a later build, into any folder, prices nothing again.",
)
@root_option
def build(out_dir: Path, site_url: str | None, plans: bool, root: Path | None) -> None:
    """Validate, then write the static reference site (refuses to publish errors).

    The site goes to --out (default _site/). Exit status: 0 written, 1 errors
    (nothing written), 2 usage error or a fault in kb.
    """
    from kb.api import open_kb, validate

    root = records_root(root)
    require_dir(root)
    started = time.perf_counter()
    from kb import progress

    with progress.reporting(progress.wanted()):
        result = validate(root)  # what `kb validate` reports, from its snapshot when unchanged
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    if errors:
        _print_findings(errors)
        click.echo(f"kb build: {len(errors)} errors; the site was not written.", err=True)
        sys.exit(1)
    checked = time.perf_counter()
    report = _build_site(open_kb(root, checked=result), out_dir, result.findings, site_url, plans)
    done = time.perf_counter()
    click.echo(
        f"kb build: wrote {out_dir} ({len(report.rendered)} pages rendered, "
        f"{len(report.written)} files rewritten, {len(report.kept)} unchanged) "
        f"in {done - started:.2f} s (validation {checked - started:.2f} s, "
        f"site {done - checked:.2f} s)"
    )


def _build_site(
    kb: KnowledgeBase,
    out_dir: Path,
    findings: list[Finding],
    site_url: str | None,
    plans: bool = True,
) -> BuildReport:
    from kb.sitegen.build import build as build_site
    from kb.sitegen.explorer import DEFAULT_MENUS
    from kb.sitegen.output import UnsafeOutputError

    menus = DEFAULT_MENUS if plans else None
    try:
        if not sys.stderr.isatty():
            return build_site(kb, out_dir, findings=findings, site_url=site_url, plans=menus)
        with click.progressbar(length=len(kb), label="Record pages", file=sys.stderr) as bar:
            return build_site(
                kb,
                out_dir,
                findings=findings,
                progress=bar.update,
                site_url=site_url,
                plans=menus,
            )
    except UnsafeOutputError as exc:
        raise click.UsageError(f"--out {out_dir}: {exc}") from None
    except OSError as exc:  # the output folder cannot be written: the user's to fix
        where = f" ({exc.filename})" if exc.filename else ""
        raise click.UsageError(
            f"--out {out_dir}: cannot write the site: {exc.strerror or exc}{where}"
        ) from None


def _print_findings(findings: list[Finding]) -> None:
    from kb.report import render

    click.echo(
        render("text", findings, len({f.location.path for f in findings})), err=True, nl=False
    )
