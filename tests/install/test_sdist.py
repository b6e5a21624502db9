"""The sdist carries every file git tracks, so a release's own suite can run from it (issue 40).

setuptools alone ships the package and `tests/test*.py` (32 of 201 test files, no
conftest.py, no records); MANIFEST.in grafts the rest. The sdist is built from the
files git tracks (as a release is, from its tag) with the build backend pyproject.toml
names, in a fresh virtual environment with pyproject.toml's build requirements (the one
the wheel is built in: tests/install/conftest.py `build_python`), and its member list is
compared with `git ls-files`.
"""

from __future__ import annotations

import tarfile

import pytest

from tests.conftest import REPO, git
from tests.install.conftest import build

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (REPO / ".git").exists(), reason="not a git checkout (an sdist)"),
]


def tracked() -> set[str]:
    return set(git(REPO, "ls-files").splitlines())


@pytest.fixture(scope="module")
def sdist_members(tmp_path_factory: pytest.TempPathFactory, build_python: str) -> set[str]:
    top = tmp_path_factory.mktemp("sdist")
    source = top / "src"
    source.mkdir()
    # the working tree's tracked files (what a commit of it would release)
    for name in tracked():
        path = REPO / name
        if path.is_file():
            target = source / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    out = top / "out"
    built = build(build_python, "build_sdist", source, out)  # the wheel's build env
    with tarfile.open(built) as archive:
        members = archive.getnames()
    prefix = built.name.removesuffix(".tar.gz") + "/"
    return {m.removeprefix(prefix) for m in members if m.startswith(prefix)}


def test_every_tracked_file_is_in_the_sdist(sdist_members: set[str]) -> None:
    files = sorted(name for name in tracked() if (REPO / name).is_file())
    missing = [name for name in files if name not in sdist_members]
    assert not missing, f"{len(missing)} tracked files missing, e.g. {missing[:10]}"


def test_the_sdist_carries_the_suite_and_no_caches(sdist_members: set[str]) -> None:
    assert "tests/conftest.py" in sdist_members
    assert "tests/install/conftest.py" in sdist_members
    assert not [m for m in sdist_members if "__pycache__" in m or ".kb-cache" in m]
