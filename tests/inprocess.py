"""`kb ARGS` run in this process by kb.cli's click group: what a subprocess shows, ~1 s cheaper.

A subprocess pays for a new interpreter and kb's imports on every call (about a
CPU-second); a test whose subject is a command's output or exit code, not the
program's start, runs the command here with click's CliRunner instead and gets the
same `subprocess.CompletedProcess` (returncode, stdout, stderr). What kb.cli.main adds
around the group (an uncaught fault -> `kb: internal error: ...`, exit 2) is mapped the
same way here; the subprocess tests of tests/commands/test_cli.py and
tests/commands/test_cli_strict.py ("no traceback, ever", stdin) hold the real entry point.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


def kb_in_process(
    args: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `kb ARGS` at `cwd` with `env` added to the environment; never raises on exit."""
    from click.testing import CliRunner

    from kb.cli import cli
    from kb.resources import ResourceMissing
    from kb.usage import UsageProblem

    before = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner(env=dict(env or {})).invoke(
            cli, list(args), input=input, prog_name="kb", catch_exceptions=True
        )
    finally:
        os.chdir(before)
    code, stderr, fault = result.exit_code, result.stderr, result.exception
    if fault is not None and not isinstance(fault, SystemExit):  # as kb.cli.main maps it
        if isinstance(fault, (UsageProblem, ResourceMissing)):
            stderr += f"kb: {fault}\n"
        else:
            stderr += f"kb: internal error: {type(fault).__name__}: {fault}\n"
        code = 2
    return subprocess.CompletedProcess(["kb", *args], code, result.stdout, stderr)
