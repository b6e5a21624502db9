"""kb as users install it: a wheel in a fresh venv, run in a folder outside this repository.

The wheel is built from this checkout's working tree (what would be released), installed
with its dependencies into a new virtual environment that does not see this checkout, and
every test runs its `kb` with the working directory in a temporary folder, so nothing here
can pass by reading files from the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import REPO, SHIPPED_RECORDS, git

if sys.version_info >= (3, 11):
    import tomllib
else:  # the test extra's mypy depends on tomli below 3.11
    import tomli as tomllib
from tests.sample import full, sample_copy
from tests.warm import seed

# Only what a user's shell would have: no PYTHONPATH pointing into the checkout, no
# PYTHONDONTWRITEBYTECODE (Python caches the bytecode of what it imports, as for a
# user). And pip (this interpreter's, pre-commit's, the build's) installs without
# compiling every module to bytecode (`PIP_COMPILE=0`, pip's `--no-compile`): compiling
# SymPy's ~1,000 modules costs ~17 CPU-s per environment (the wheel's venv, pre-commit's
# hook environment: measured 25.5 -> 8.1 and 29.4 -> 14.2 CPU-s), while kb's first run
# in each compiles only what it imports (~4.5 CPU-s), into the same venv, once; what
# runs is the same.
CLEAN_ENV = {
    **{
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "PYTHONPATH",
            "KB_SCHEMAS",
            "KB_CACHE_DIR",
            "VIRTUAL_ENV",
            "PYTHONDONTWRITEBYTECODE",
        )
    },
    "PIP_COMPILE": "0",
}


def run(
    cmd: Sequence[str], cwd: Path, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(cmd),
        cwd=cwd,
        env={**CLEAN_ENV, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def user_records(target: Path) -> Path:
    """A user's records folder at `target`: the shipped sample per push, records/ with KB_FULL=1.

    What these tests hold is packaging and the process boundary (the wheel carries the
    schemas, templates and every command; the hook and the action block what kb finds,
    located): the same code runs whatever the tree. The sample (tests/sample.py) has
    every kind of claim, a derivation, a placement, the H100 whose edits the tests make
    and each record they edit or cite; tests/project/test_sample.py holds it clean and
    closed, tests/install/test_user_records.py that it holds what these tests edit.
    """
    if full():
        shutil.copytree(SHIPPED_RECORDS, target)
        return target
    return sample_copy(target)


def package_tree(target: Path) -> Path:
    """The files a release is built from (the working tree, not HEAD): a hook repo's content."""
    target.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml"):
        shutil.copy2(REPO / name, target / name)
    shutil.copytree(
        REPO / "kb",
        target / "kb",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".kb-cache"),
    )
    return target


def build_requires() -> list[str]:
    """pyproject.toml's `[build-system] requires` (what a release is built with)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    requires: list[str] = config["build-system"]["requires"]
    return requires


@pytest.fixture(scope="session")
def build_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fresh venv's python with pyproject.toml's build requirements and nothing else.

    What `pip wheel` sets up for each build (an isolated environment with the build
    requirements, then the backend's hooks), made once for the wheel and the sdist
    (tests/install/test_sdist.py); the venv gets no pip of its own (this interpreter's
    pip installs into it, as for `installed`).
    """
    home = tmp_path_factory.mktemp("build-env") / "env"
    venv.EnvBuilder(with_pip=False).create(home)
    python = str(home / "bin" / "python")
    done = run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", *build_requires()],
        cwd=home,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    return python


def build(python: str, hook: str, source: Path, out: Path) -> Path:
    """Run the build backend's `hook` (build_wheel, build_sdist) on `source`; the file built.

    The backend pyproject.toml names, its hooks called as a build frontend calls them:
    what `get_requires_for_...` asks for beyond the build requirements must be nothing.
    """
    backend = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    module = backend["build-system"]["build-backend"]
    code = (
        f"import {module} as b; extra = b.get_requires_for_{hook}(); "
        f"assert not extra, extra; print(b.{hook}({str(out)!r}))"
    )
    done = run([python, "-c", code], cwd=source)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Deprecat" not in done.stderr, done.stderr  # no setuptools deprecation warnings
    return out / done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory, build_python: str) -> Path:
    source = package_tree(tmp_path_factory.mktemp("src") / "kb-src")
    out = tmp_path_factory.mktemp("wheel")
    built = build(build_python, "build_wheel", source, out)
    assert built.suffix == ".whl" and list(out.glob("*.whl")) == [built], built
    return built


@pytest.fixture(scope="session")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ folder of a fresh venv with the wheel and its dependencies installed.

    The venv gets no pip of its own (ensurepip costs ~7 CPU-s): this interpreter's pip
    installs into it (`pip --python`), as a user's pip would; kb never needs pip.
    """
    home = tmp_path_factory.mktemp("venv") / "env"
    venv.EnvBuilder(with_pip=False).create(home)
    python = str(home / "bin" / "python")
    done = run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", str(wheel)], cwd=home
    )
    assert done.returncode == 0, done.stderr
    return home / "bin"


def seed_repository(repo: Path, stores: Path) -> Path:
    """`stores` in a records repository's `.kb-cache`, with the .gitignore kb writes there.

    The folder ignores itself as kb leaves it, so git (`git add -A`, `git status`) and the
    hook see the repository as they would after a first run; the hook's environment has
    the wheel's code, schemas and libraries, so its runs are served by the stores.
    """
    from kb.store import GITIGNORE

    cache = seed(stores, repo / ".kb-cache")
    (cache / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    return cache


def readme_snippet() -> str:
    """The pre-commit configuration README.md shows (the fenced yaml block with `repos:`)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks: list[str] = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    (snippet,) = [block for block in blocks if block.startswith("repos:")]
    return snippet


def readme_rev() -> str:
    """The `rev:` README.md's snippet names (the release tag the hook tests install)."""
    match = re.search(r"^\s+rev: (\S+)$", readme_snippet(), flags=re.M)
    assert match, readme_snippet()
    return match.group(1)


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This working tree as a released hook repository: one commit, tagged as README says.

    One per session (tests/install runs on one worker: tests/conftest.py), so pre-commit
    builds the hook's environment once in `pre_commit_home` for every hook test.
    """
    repo = package_tree(tmp_path_factory.mktemp("hook") / "kb")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "kb release")
    git(repo, "tag", "-a", readme_rev(), "-m", f"kb {readme_rev()}")
    return repo


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pre-commit's cache of hook environments, shared by every hook test of the session."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="session")
def wheel_stores(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The result stores the wheel's own cold `kb validate` of `user_records` left.

    A cold run of the shipped records costs ~13 CPU-s (of the sample ~1); `outside`
    starts from these stores (a user's second run, tests/warm.py), so each test pays for
    what its edit reaches. The wheel made them: its code, schemas and libraries are what
    the stores' keys hold (kb.fingerprint.salt).
    """
    work = tmp_path_factory.mktemp("wheel-stores") / "user-repo"
    user_records(work / "records")
    done = run([str(installed / "kb"), "validate", "--full", "--quiet"], cwd=work)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return work / ".kb-cache"


@pytest.fixture
def outside(tmp_path: Path, wheel_stores: Path) -> Path:
    """A folder outside the repository with `user_records` (the sample per push).

    Its `.kb-cache` holds the wheel's record and equation stores (`wheel_stores`), never a
    run snapshot or the folder's .gitignore: kb writes those.
    """
    work = tmp_path / "user-repo"
    user_records(work / "records")
    seed(wheel_stores, work / ".kb-cache")
    assert REPO not in work.resolve().parents
    return work


@pytest.fixture
def outside_sample(tmp_path: Path) -> Path:
    """A folder outside the repository with the shipped sample (tests/sample.py), no stores.

    For what the wheel must carry whatever the tree (the site's templates and assets, the
    schemas, each command): a cold run and a whole site of ~80 records, not ~440.
    """
    work = tmp_path / "user-sample"
    sample_copy(work / "records")
    assert REPO not in work.resolve().parents
    return work


def edit(path: Path, pattern: str, replacement: str) -> int:
    """Replace the first line matching `pattern`; return its 1-based number (fails loudly)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for number, line in enumerate(lines, 1):
        if re.search(pattern, line):
            lines[number - 1] = re.sub(pattern, replacement, line, count=1)
            path.write_text("".join(lines), encoding="utf-8")
            return number
    raise AssertionError(f"{path}: no line matches {pattern!r}")


def break_three_ways(records: Path) -> dict[str, tuple[str, int]]:
    """A schema error, a dangling reference and the H100 HBM edit; code -> (file, line)."""
    h100 = records / "hardware/nvidia-h100-sxm.yaml"
    vendor = edit(h100, r"^vendor: .*$", "vendor: 42")
    receipt = records / "receipts/azure-nd-h100-v5-hbm-bandwidth.yaml"
    dangling = edit(receipt, r"^source: sources/\S+$", "source: sources/no-such-document")
    edit(h100, r"^(  bandwidth: \{value: )3350\b", r"\g<1>2000")
    return {
        "SC": ("records/hardware/nvidia-h100-sxm.yaml", vendor),
        "RF": ("records/receipts/azure-nd-h100-v5-hbm-bandwidth.yaml", dangling),
    }
