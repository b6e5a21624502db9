"""Every `KB_*` environment setting kb reads, read here and nowhere else.

Each is read when asked for (not at import), so a test or a caller that changes
the environment between runs is heard. A value kb cannot use is a UsageProblem
(exit 2 with a one-line message), never a silent default.

- KB_JOBS: how many worker processes kb may fork (1: everything in this process);
- KB_EQ_WORK: steps (Python calls) each symbolic check may make (default 3,000,000);
- KB_EQ_BUDGET: seconds of the last-resort wall-clock guard on each check (default 60);
- KB_CACHE_DIR: where the store of results kept between runs lives (kb.store);
- KB_SCHEMAS: a folder of schemas that replaces the packaged set (kb.resources);
- KB_SCHEMA_ENGINE: `python` to validate with python-jsonschema only (kb.schema);
- KB_LSP_DEBOUNCE_MS: how long `kb lsp` waits after an edit before checking (default 30).

Two settings every colouring tool reads are read here too: NO_COLOR and FORCE_COLOR
(`colour()`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kb.usage import UsageProblem

JOBS, EQ_BUDGET, CACHE_DIR = "KB_JOBS", "KB_EQ_BUDGET", "KB_CACHE_DIR"
EQ_WORK, SCHEMAS, SCHEMA_ENGINE = "KB_EQ_WORK", "KB_SCHEMAS", "KB_SCHEMA_ENGINE"
LSP_DEBOUNCE = "KB_LSP_DEBOUNCE_MS"
KNOBS = (JOBS, EQ_WORK, EQ_BUDGET, CACHE_DIR, SCHEMAS, SCHEMA_ENGINE, LSP_DEBOUNCE)
DEFAULT_DEBOUNCE_MS = 30.0
DEFAULT_WORK = 3_000_000  # steps (Python calls) per symbolic check: kb.equations.work
DEFAULT_GUARD = 60.0  # seconds: the wall-clock guard no check of the suite reaches


def _text(name: str) -> str:
    return os.environ.get(name, "").strip()


def jobs() -> int | None:
    """$KB_JOBS as a count of workers (at least 1), or None when unset."""
    text = _text(JOBS)
    if not text:
        return None
    if not text.isdigit():
        raise UsageProblem(f"{JOBS}={text!r}: expected a whole number of worker processes")
    return max(1, int(text))


def eq_work() -> int:
    """$KB_EQ_WORK (steps, a positive whole number) if set, else DEFAULT_WORK."""
    text = _text(EQ_WORK).replace("_", "")
    if not text:
        return DEFAULT_WORK
    if not (text.isascii() and text.isdigit()) or int(text) == 0:
        raise UsageProblem(
            f"{EQ_WORK}={_text(EQ_WORK)!r}: expected a positive whole number of steps"
        )
    return int(text)


def eq_budget() -> float:
    """$KB_EQ_BUDGET (seconds of the wall-clock guard, a positive number) or DEFAULT_GUARD."""
    text = _text(EQ_BUDGET)
    if not text:
        return DEFAULT_GUARD
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise UsageProblem(f"{EQ_BUDGET}={text!r}: expected a positive number of seconds")
    return value


def lsp_debounce() -> float:
    """$KB_LSP_DEBOUNCE_MS in seconds (a number of milliseconds, zero or more), or 0.03."""
    text = _text(LSP_DEBOUNCE)
    if not text:
        return DEFAULT_DEBOUNCE_MS / 1000
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise UsageProblem(f"{LSP_DEBOUNCE}={text!r}: expected milliseconds, zero or more")
    return value / 1000


def colour() -> bool | None:
    """False under NO_COLOR, True under FORCE_COLOR, None (a terminal colours) otherwise.

    As no-color.org and ruff read them: set and not empty; NO_COLOR wins.
    """
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return None


def cache_dir() -> Path | None:
    """$KB_CACHE_DIR, or None: the store then lives beside the records folder."""
    text = _text(CACHE_DIR)
    return Path(text) if text else None


def schemas_dir() -> Path | None:
    """$KB_SCHEMAS, or None: the packaged schemas are used."""
    text = _text(SCHEMAS)
    return Path(text) if text else None


def python_schema_engine() -> bool:
    """True when KB_SCHEMA_ENGINE=python turns the compiled jsonschema-rs pass off."""
    return _text(SCHEMA_ENGINE) == "python"


@contextmanager
def overriding(name: str, value: str) -> Iterator[None]:
    """Set the environment variable `name` for a block (kb diff: KB_CACHE_DIR of the tree)."""
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous
