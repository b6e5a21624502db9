"""`kb validate [PATH...]`: every problem in one pass; exit 0 clean, 1 findings, 2 usage/fault."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kb.commands._codes import codes_option
from kb.commands._common import records_root, require_dir, root_option
from kb.commands._paths import refuse_non_records, refuse_stdin_filename

if TYPE_CHECKING:
    from kb.api import Result

STDIN = Path("-")

FAIL_LEVELS = {
    "error": ("error",),
    "warning": ("error", "warning"),
    "info": ("error", "warning", "info"),
}


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, exists=True, allow_dash=True))
@root_option
@click.option(
    "--stdin-filename",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="PATH",
    help="With `-`: where the record read from stdin lives in the tree "
    "(e.g. records/hardware/x.yaml); findings are reported there.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github", "sarif"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option("--base", metavar="REV", help="Also check versions against this git revision.")
@codes_option("--select", "Only these codes or prefixes (repeatable, or comma-separated).")
@codes_option("--ignore", "Skip these codes or prefixes (repeatable, or comma-separated).")
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    default="error",
    show_default=True,
    help="Lowest severity that makes the exit code 1.",
)
@click.option(
    "--output", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write the report here."
)
@click.option(
    "--full", is_flag=True, help="Re-check every record, not just what changed since the last run."
)
def validate(
    paths: tuple[Path, ...],
    root: Path | None,
    stdin_filename: Path | None,
    fmt: str,
    base: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    fail_on: str,
    output: Path | None,
    full: bool,
) -> None:
    """Validate records (default: all of records/): schema, references, provenance, equations.

    PATH may be `-`: one record read from stdin, checked as the file --stdin-filename
    names (the rest of the tree as it is on disk).

    Exit status: 0 clean, 1 findings at or above --fail-on, 2 usage error or a fault in kb.
    """
    from kb.report import render

    if STDIN in paths or stdin_filename is not None:
        result = _check_stdin(paths, stdin_filename, root, base, select, ignore)
    else:
        root = records_root(root, paths)
        require_dir(root)
        refuse_non_records(root, paths)
        result = _check(root, list(paths), base, select, ignore, full)
    report = render(fmt, result.findings, len(result.checked_paths))
    if output is not None:
        _write_atomically(output, report)
    else:
        click.echo(report, nl=False)
    failing = [f for f in result.findings if f.severity.value in FAIL_LEVELS[fail_on]]
    sys.exit(1 if failing else 0)


def _check(
    root: Path,
    paths: list[Path],
    base: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    full: bool = False,
) -> Result:
    """kb.api.validate, with a --base that git cannot read turned into a usage error."""
    from kb.api import validate as check
    from kb.gitbase import GitBaseError

    try:
        return check(root, paths, base=base, full=full, select=select, ignore=ignore)
    except GitBaseError as exc:
        raise click.UsageError(f"--base {base}: {exc}") from None


def _check_stdin(
    paths: tuple[Path, ...],
    name: Path | None,
    root: Path | None,
    base: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
) -> Result:
    """Check the record on stdin as the file `name` of the tree (never cached as that file)."""
    from kb import overlay
    from kb.loader import MAX_FILE_BYTES

    if paths != (STDIN,):
        raise click.UsageError(
            "`-` reads one record from stdin: name no other PATH with it"
            if STDIN in paths
            else "--stdin-filename goes with PATH `-`"
        )
    if name is None:
        raise click.UsageError(
            "`-` needs --stdin-filename records/<folder>/<name>.yaml: "
            "where the record lives in the tree"
        )
    root = records_root(root, [name])
    require_dir(root)
    refuse_stdin_filename(root, name)
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise click.UsageError("`-`: there is no stdin to read the record from")
    try:
        data = stream.read(MAX_FILE_BYTES + 1)  # one byte over the limit is enough for LD003
    except OSError as exc:
        raise click.UsageError(f"`-`: cannot read stdin: {exc.strerror or exc}") from None
    with overlay.standing_in(name, data):
        return _check(root, [name], base, select, ignore)


def _write_atomically(path: Path, text: str) -> None:
    """Write the report to the regular file `path` names (kb.outfile); else a usage error."""
    from kb.outfile import write_report
    from kb.usage import UsageProblem

    try:
        write_report(path, text)
    except UsageProblem as exc:
        raise click.UsageError(str(exc)) from None
