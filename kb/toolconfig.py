"""`[tool.kb]` in pyproject.toml: defaults for `kb validate`, found as ruff finds its own.

From the records folder upward, the first `pyproject.toml` that has a `[tool.kb]`
table is the configuration (a pyproject.toml without one is passed over, as ruff
passes over one without `[tool.ruff]`). Its keys:

- `select`, `ignore`: lists of rule codes or prefixes (as `--select`/`--ignore`);
- `fail-on`: `error`, `warning` or `info` (as `--fail-on`);
- `output-format`: `full`, `concise`, `json`, `github` or `sarif` (as `--output-format`).

An option given on the command line replaces the key's value. An unknown key, a
value of the wrong type or an unknown code is a UsageProblem (exit 2) naming the
file, never ignored: a typo must not silently check less.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from kb.usage import UsageProblem

FILE = "pyproject.toml"
FAIL_ON = ("error", "warning", "info")
OUTPUT_FORMATS = ("full", "concise", "json", "github", "sarif")
KEYS = ("select", "ignore", "fail-on", "output-format")


@dataclass(frozen=True)
class ToolConfig:
    """The `[tool.kb]` values (None/empty where a key is absent) and the file they came from."""

    path: Path | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str | None = None
    output_format: str | None = None


def find(start: Path) -> Path | None:
    """The first pyproject.toml with a `[tool.kb]` table in `start` or a folder above it."""
    folder = start.resolve()
    for candidate in [folder, *folder.parents]:
        path = candidate / FILE
        if path.is_file() and "kb" in _tool_tables(path):
            return path
    return None


def load(start: Path) -> ToolConfig:
    """The configuration that applies to the records folder `start` (empty when none does)."""
    path = find(start)
    if path is None:
        return ToolConfig()
    table = _tool_tables(path)["kb"]
    where = f"{path}: [tool.kb]"
    if not isinstance(table, dict):
        raise UsageProblem(f"{where} must be a table")
    unknown = [key for key in table if key not in KEYS]
    if unknown:
        from kb.suggest import did_you_mean

        named = []
        for key in unknown:
            close = did_you_mean(str(key), KEYS)
            named.append(f"{key!r}" + (f" ({close})" if close else ""))
        raise UsageProblem(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(named)}; "
            f"the keys are {', '.join(KEYS)}"
        )
    return ToolConfig(
        path=path,
        select=_codes(table, "select", where),
        ignore=_codes(table, "ignore", where),
        fail_on=_choice(table, "fail-on", FAIL_ON, where),
        output_format=_choice(table, "output-format", OUTPUT_FORMATS, where),
    )


def _codes(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    from kb.commands._codes import describe_unknown, registered_codes, unknown_codes

    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageProblem(f'{where}: {key} must be a list of rule codes, e.g. ["SC", "RF001"]')
    codes = tuple(v.strip().upper() for v in value)
    known = registered_codes()
    unknown = unknown_codes(codes, known)
    if unknown:
        raise UsageProblem(f"{where}: {key}: {describe_unknown(unknown, known)}")
    return codes


def _choice(table: Mapping[str, Any], key: str, choices: tuple[str, ...], where: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if value not in choices:
        raise UsageProblem(f"{where}: {key} = {value!r}: expected one of {', '.join(choices)}")
    return str(value)


def _tool_tables(path: Path) -> Mapping[str, Any]:
    """The `[tool]` table of a pyproject.toml; a file TOML cannot read is a UsageProblem."""
    try:
        data = _toml_loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageProblem(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageProblem(f"{path}: not UTF-8 text") from None
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise UsageProblem(f"{path}: not valid TOML: {exc}") from None
    tool = data.get("tool", {})
    return tool if isinstance(tool, dict) else {}


def _toml_loads(text: str) -> dict[str, Any]:
    # tomllib from Python 3.11; its backport tomli before (a dependency only there)
    module = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
    loads = cast(Callable[[str], dict[str, Any]], module.loads)
    return loads(text)
