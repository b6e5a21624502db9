"""`kb validate [PATH...]`: every problem in one pass; exit 0 clean, 1 findings, 2 usage/fault.

Output, as ruff's: `--output-format full` (the default: errors first, each with its
hint; warnings and infos capped at `--max-per-code` per code and counted),
`concise` (one line per finding), or `json`, `github`, `sarif` for programs (every
finding). `--format text|json|github|sarif` is the older spelling of the same
option (`text` is `full`). `--statistics` prints counts per code only; `--quiet`
only the findings that fail the run (at or above `--fail-on`) and nothing else;
`--exit-zero` exits 0 whatever was found. `[tool.kb]` in the nearest pyproject.toml
above the records folder gives defaults for select, ignore, fail-on and
output-format (kb.toolconfig); an option on the command line replaces its key.
On a terminal, stderr shows the stages' progress while they run (kb.progress).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from kb.commands._codes import codes_option
from kb.commands._common import records_root, require_dir, root_option
from kb.commands._paths import refuse_non_records, refuse_stdin_filename

if TYPE_CHECKING:
    from kb.api import Result
    from kb.overlay import Overlay
    from kb.toolconfig import ToolConfig

STDIN = Path("-")

FAIL_ON = ("error", "warning", "info")
OUTPUT_FORMATS = ("full", "concise", "json", "github", "sarif")
PER_CODE = 3  # kb.report.PER_CODE, without importing the report module for --help
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
    "--output-format",
    "output_format",
    type=click.Choice(OUTPUT_FORMATS),
    default=None,
    help="full (default: errors first, the rest capped per code), concise (one line each), "
    "or json, github, sarif (every finding).  [default: full, or [tool.kb] output-format]",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github", "sarif"]),
    default=None,
    help="The older spelling of --output-format (text is full).",
)
@click.option("--base", metavar="REV", help="Also check versions against this git revision.")
@codes_option("--select", "Only these codes or prefixes (repeatable, or comma-separated).")
@codes_option("--ignore", "Skip these codes or prefixes (repeatable, or comma-separated).")
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default=None,
    help="Lowest severity that makes the exit code 1.  [default: error]",
)
@click.option(
    "--statistics", is_flag=True, help="Print the number of findings per code, nothing else."
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="full/concise: print only the findings that fail the run (at or above --fail-on), "
    "no summary, no progress.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings fail the run.")
@click.option(
    "--max-per-code",
    type=click.IntRange(min=0),
    default=PER_CODE,
    show_default=True,
    metavar="N",
    help="full/concise: findings below --fail-on shown per code (0: all).",
)
@click.option(
    "--isolated", is_flag=True, help="Ignore [tool.kb] in pyproject.toml (command line only)."
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
    output_format: str | None,
    fmt: str | None,
    base: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    fail_on: str | None,
    statistics: bool,
    quiet: bool,
    exit_zero: bool,
    max_per_code: int,
    isolated: bool,
    output: Path | None,
    full: bool,
) -> None:
    """Validate records (default: all of records/): schema, references, provenance, equations.

    PATH may be `-`: one record read from stdin, checked as the file --stdin-filename
    names (the rest of the tree as it is on disk).

    Exit status: 0 clean, 1 findings at or above --fail-on, 2 usage error or a fault in kb.
    """
    from kb import progress

    cli_format = _one_format(output_format, fmt)
    with progress.reporting(progress.wanted(quiet)):
        result, config, root = _run(
            paths, root, stdin_filename, base, select, ignore, full, isolated
        )
    fail_levels = FAIL_LEVELS[fail_on or config.fail_on or "error"]
    chosen = cli_format or config.output_format or "full"
    report = _report(result, chosen, fail_levels, statistics, quiet, max_per_code, root.parent)
    if output is not None:
        _write_atomically(output, report)
    else:
        click.echo(report, nl=False)
    failing = [f for f in result.findings if f.severity.value in fail_levels]
    sys.exit(1 if failing and not exit_zero else 0)


def _run(
    paths: tuple[Path, ...],
    root: Path | None,
    stdin_filename: Path | None,
    base: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    full: bool,
    isolated: bool,
) -> tuple[Result, ToolConfig, Path]:
    """Check what the command line names, with [tool.kb]'s select/ignore unless given.

    Also the records folder the run checked.
    """
    if STDIN in paths or stdin_filename is not None:
        folder = records_root(root, [stdin_filename] if stdin_filename else [])
        config = _config(folder, isolated)
        select, ignore = select or config.select, ignore or config.ignore
        return _check_stdin(paths, stdin_filename, root, base, select, ignore), config, folder
    folder = records_root(root, paths)
    require_dir(folder)
    config = _config(folder, isolated)
    select, ignore = select or config.select, ignore or config.ignore
    refuse_non_records(folder, paths)
    result = _check(folder, list(paths), base, select, ignore, full)
    return _caused_by(result, paths), config, folder


def _caused_by(result: Result, paths: tuple[Path, ...]) -> Result:
    """With PATHs: every finding on their files; on their referrers, the cross-record ones.

    A file that references PATH's records is reported on for what a change to PATH can
    cause (a rule whose READS is not `record` or `base`); its own record-local findings
    are not about PATH and are left out.
    """
    if not paths:
        return result
    from dataclasses import replace

    from kb.loader import PathResolver
    from kb.reads import LOCAL_READS, codes_reading

    resolve = PathResolver()
    wanted = [str(p.resolve()) for p in paths]

    def own(name: str) -> bool:
        path = str(resolve(Path(name)))
        return any(path == w or path.startswith(w.rstrip("/") + "/") for w in wanted)

    local = codes_reading(*LOCAL_READS, "base")
    kept = [f for f in result.findings if f.code not in local or own(f.location.path)]
    return replace(result, findings=kept)


def _one_format(output_format: str | None, fmt: str | None) -> str | None:
    """--output-format, or --format (its older spelling; `text` is `full`); both must agree."""
    old = "full" if fmt == "text" else fmt
    if output_format is not None and old is not None and old != output_format:
        raise click.UsageError(
            f"--format {fmt} and --output-format {output_format} disagree: give one "
            "(--format is the older spelling of --output-format)"
        )
    return output_format or old


def _config(root: Path, isolated: bool) -> ToolConfig:
    """[tool.kb] above `root` (none with --isolated); a bad one is a usage error in kb's words."""
    from kb.toolconfig import ToolConfig, load
    from kb.usage import UsageProblem

    if isolated:
        return ToolConfig()
    try:
        return load(root)
    except UsageProblem as exc:
        raise ConfigError(str(exc)) from None


class ConfigError(click.ClickException):
    """A bad `[tool.kb]`: `kb: <file>: ...` and exit 2, as for a bad option."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"kb: {self.format_message()}", err=True)


def _report(
    result: Result,
    chosen: str,
    fail_levels: tuple[str, ...],
    statistics: bool,
    quiet: bool,
    per_code: int,
    project: Path,
) -> str:
    """The text printed: statistics, a person's report (full/concise) or a program's format.

    A person's report names files from the working directory (clickable in a
    terminal); the program formats from `project`, the folder holding the records
    folder, whatever the working directory (kb.report.rebased).
    """
    from kb import report

    findings, checked = result.findings, len(result.checked_paths)
    if statistics:
        if chosen == "json":
            return report.statistics_json(findings)
        if chosen in ("github", "sarif"):
            raise click.UsageError(f"--statistics prints counts as text or json, not {chosen}")
        shown = [f for f in findings if f.severity.value in fail_levels] if quiet else findings
        return report.statistics(shown)
    if chosen in ("full", "concise"):
        if quiet:
            findings = [f for f in findings if f.severity.value in fail_levels]
        return report.text(
            findings,
            checked,
            concise=chosen == "concise",
            per_code=per_code,
            fail_levels=fail_levels,
            footer=not quiet,
        )
    findings = report.rebased(findings, project)
    if chosen == "sarif":
        root_uri = Path(os.path.abspath(project)).as_uri().rstrip("/") + "/"
        return report.sarif(findings, checked, root_uri=root_uri)
    return report.render(chosen, findings, checked)


def _check(
    root: Path,
    paths: list[Path],
    base: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    full: bool = False,
    standing_in: Overlay | None = None,
) -> Result:
    """kb.api.validate, with a --base that git cannot read turned into a usage error."""
    from kb.api import validate as check
    from kb.gitbase import GitBaseError
    from kb.overlay import NONE

    try:
        return check(
            root,
            paths,
            base=base,
            full=full,
            select=select,
            ignore=ignore,
            standing_in=standing_in or NONE,
        )
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
    from kb.loader import MAX_FILE_BYTES
    from kb.overlay import standing_in

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
    return _check(root, [name], base, select, ignore, standing_in=standing_in(name, data))


def _write_atomically(path: Path, text: str) -> None:
    """Write the report to the regular file `path` names (kb.outfile); else a usage error."""
    from kb.outfile import write_report
    from kb.usage import UsageProblem

    try:
        write_report(path, text)
    except UsageProblem as exc:
        raise click.UsageError(str(exc)) from None
