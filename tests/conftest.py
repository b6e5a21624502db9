"""Shared test helpers: write a small records tree, run the real checker or the real `kb`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, settings

# Every property test draws the same examples on every run and machine (issue 34): a failure
# in CI reproduces locally, and no run passes by luck. `KB_FUZZ_EXAMPLES` raises the fuzzers'
# example counts (tests/fuzz); `KB_HYPOTHESIS_PROFILE=explore` draws fresh examples.
# No wall-clock limit either: a verdict never depends on machine load, so Hypothesis's
# per-example deadline and its "too slow" health check (both wall time) are off.
_LOAD_BLIND = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("kb", derandomize=True, database=None, print_blob=True, **_LOAD_BLIND)
settings.register_profile("explore", derandomize=False, print_blob=True, **_LOAD_BLIND)
settings.load_profile(os.environ.get("KB_HYPOTHESIS_PROFILE", "kb"))

REPO = Path(__file__).resolve().parent.parent
SHIPPED_RECORDS = REPO / "records"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

HISTORY = '  - {version: 1, date: "2026-11-30", change: First encoding.}\n'


_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def read_shown_number(number: str) -> Fraction:
    """A number as kb.numfmt shows it, back as a value: `4.8`, or `1.659×10⁻²⁰`."""
    mantissa, _, exponent = number.partition("×10")
    return Fraction(mantissa) * Fraction(10) ** int(exponent.translate(_SUPERSCRIPT_DIGITS) or 0)


# libyaml's safe loader builds the same data as PyYAML's pure-Python `yaml.safe_load` (every
# YAML file under records/ and tests/ compared equal, and refused alike) about 30x faster:
# tests that parse many files at collection use it (collection runs on every xdist worker).
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """`yaml.safe_load(text)` through libyaml when it is installed."""
    return yaml.load(text, Loader=_FAST_LOADER)


def source_yaml(record_id: str = "sources/doc", **extra: str) -> str:
    """A minimal valid source record; `extra` adds top-level `key: value` lines."""
    lines = [
        "kind: source",
        f"id: {record_id}",
        "title: A document",
        "version: 1",
        "status: draft",
        "history:",
        HISTORY.rstrip("\n"),
        "publisher: Someone",
        "source_type: documentation",
        *(f"{key}: {value}" for key, value in extra.items()),
    ]
    return "\n".join(lines) + "\n"


def write_file(path: Path, spec: str | Mapping[str, Any]) -> None:
    """Write one fixture file: YAML text, or {hex}, {symlink}, or {text, pad_to} for odd inputs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(spec, str):
        path.write_text(spec, encoding="utf-8")
    elif "hex" in spec:
        path.write_bytes(bytes.fromhex(spec["hex"]))
    elif "symlink" in spec:
        path.symlink_to(spec["symlink"])
    elif "pad_to" in spec:
        text = spec.get("text", "")
        padding = int(spec["pad_to"]) - len(text.encode())
        line = "#" + "x" * 99 + "\n"
        path.write_text(text + line * (padding // len(line) + 1), encoding="utf-8")
    else:
        raise ValueError(f"unknown file spec {spec!r}")


def link_yaml(
    per_link: str = "basis: derived, source: sources/doc",
    per_device: str | None = "basis: unverified",
    summary: str | None = None,
) -> str:
    """A small PCIe interconnect record, `interconnects/link`, as YAML text.

    `per_link` and `per_device` are the provenance after each figure's value and unit
    (`per_device` None: no such figure); `summary` adds a quoted summary line.
    """
    lines = ["kind: interconnect", "id: interconnects/link", "title: A link", "version: 1"]
    lines += ["status: draft"] + ([f'summary: "{summary}"'] if summary is not None else [])
    lines += ["history:", '  - {version: 1, date: "2026-11-30", change: First encoding.}']
    lines += ["family: PCIe", "topology: point-to-point", "bandwidth:"]
    lines += [f"  per_link: {{value: 31.5, unit: GB/s, {per_link}}}"]
    if per_device is not None:
        lines += [f"  per_device: {{value: 63, unit: GB/s, {per_device}}}"]
    return "\n".join(lines) + "\n"


def write_tree(root: Path, files: Mapping[str, str | Mapping[str, Any]]) -> Path:
    """Write `files` ({path under root: spec}) under `root`; returns root."""
    root.mkdir(parents=True, exist_ok=True)
    for relative, spec in files.items():
        write_file(root / relative, spec)
    return root


def git(cwd: Path, *args: str) -> str:
    """Run git quietly with a fixed identity; returns stdout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "kb tests",
        "GIT_AUTHOR_EMAIL": "tests@kb.invalid",
        "GIT_COMMITTER_NAME": "kb tests",
        "GIT_COMMITTER_EMAIL": "tests@kb.invalid",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def git_repo_with(root: Path, files: Mapping[str, str | Mapping[str, Any]]) -> Path:
    """A git repository at root's parent whose first commit holds `files` under root."""
    write_tree(root, files)
    top = root.parent
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "base")
    return top


def replace_tree(root: Path, files: Mapping[str, str | Mapping[str, Any]]) -> Path:
    """Remove every record under root and write `files` instead (git history is kept)."""
    if root.exists():
        shutil.rmtree(root)
    return write_tree(root, files)


def kb_executable() -> list[str]:
    """The installed `kb` console script (beside this interpreter), else `python -m kb`."""
    script = Path(sys.executable).parent / "kb"
    if script.exists():
        return [str(script)]
    found = shutil.which("kb")
    return [found] if found else [sys.executable, "-m", "kb"]


def run_kb(
    args: Sequence[str], cwd: Path, timeout: float = 60, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real `kb` command line in a subprocess; never raises on a non-zero exit."""
    return subprocess.run(
        [*kb_executable(), *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# Under pytest-xdist (`--dist loadgroup`, pyproject.toml) every test of a group runs on one
# worker: tests/install shares one built wheel, one fresh venv and one pre-commit home per
# session, which each worker would otherwise build again.
_XDIST_GROUPS = {"install": REPO / "tests" / "install"}


def module_group(item: pytest.Item) -> str:
    """The xdist group of a test no other group holds: its module (`run/test_incremental.py`).

    A module's module-scoped fixtures (a browser, a served or built site, a tree's warm
    template) are made once a run, not once on each worker that runs one of its tests (in
    CI, 11 modules set up a fixture of 0.4-2.4 s on both workers); xdist hands out the
    modules, the most tests first.
    """
    try:
        return item.path.relative_to(REPO / "tests").as_posix()
    except ValueError:  # a test file outside tests/, named on the command line
        return item.path.as_posix()


# tryfirst: before xdist's worker reads the marks. pluggy calls the tryfirst hook registered
# last first, so tests/site/conftest.py's groups are on its items by then, and kept.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for group, folder in _XDIST_GROUPS.items():
            if folder in item.path.parents:
                item.add_marker(pytest.mark.xdist_group(group))
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(module_group(item)))


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary working directory (findings print paths relative to it)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def shipped_copy(tmp_path: Path) -> Path:
    """A copy of the shipped records/ (to break on purpose); returns the copy's records folder."""
    target = tmp_path / "records"
    shutil.copytree(SHIPPED_RECORDS, target)
    return target


@pytest.fixture(scope="session")
def shipped_stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The result stores one cold check of the shipped records left (tests/warm.py)."""
    from tests.warm import make_stores

    return make_stores(tmp_path_factory)


@pytest.fixture(scope="session")
def repo_stores(shipped_stores: Path) -> Path:
    """The shipped records' own `.kb-cache`, holding the claims' stores of `shipped_stores`
    when it held none (tests/warm.py `seed_repo`): for tests that run kb on records/ in place."""
    from tests.warm import seed_repo

    return seed_repo(shipped_stores)


@pytest.fixture
def warm_copy(tmp_path: Path, shipped_stores: Path) -> Path:
    """`shipped_copy` whose `.kb-cache` holds the shipped records' result stores (no snapshot)."""
    from tests.warm import seed

    target = tmp_path / "records"
    shutil.copytree(SHIPPED_RECORDS, target)
    seed(shipped_stores, tmp_path / ".kb-cache")
    return target


def shipped_copy_with_broken_h100(tmp_path: Path) -> Path:
    """The shipped records copied, the H100 off schema (SC001) and one source gone (RF001)."""
    records = tmp_path / "records"
    shutil.copytree(SHIPPED_RECORDS, records)
    return break_h100(records)


def break_h100(records: Path) -> Path:
    """A records tree's H100 put off schema (SC001) and one of its sources gone (RF001)."""
    broken = records / "hardware" / "nvidia-h100-sxm.yaml"
    broken.write_text(
        broken.read_text()
        .replace("basis: vendor-spec", "basis: nope", 1)
        .replace("source: sources/", "source: sources/gone-", 1)
    )
    return records
