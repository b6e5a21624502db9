"""kb.fingerprint: the one salt changes with kb's code, a library's version and the schemas."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb import fingerprint
from kb.resources import schemas_dir


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    fingerprint.code_fingerprint.cache_clear()
    yield
    fingerprint.code_fingerprint.cache_clear()


def test_the_salt_is_stable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KB_SCHEMAS", raising=False)
    first = fingerprint.salt()
    fingerprint.code_fingerprint.cache_clear()
    assert fingerprint.salt() == first


def test_a_schema_file_changes_the_salt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KB_SCHEMAS", raising=False)
    packaged = fingerprint.salt()
    shutil.copytree(schemas_dir(), tmp_path / "schemas")
    monkeypatch.setenv("KB_SCHEMAS", str(tmp_path / "schemas"))
    copied = fingerprint.salt()
    assert copied == packaged  # the same schemas, read from elsewhere
    source = tmp_path / "schemas" / "source.schema.json"
    source.write_text(source.read_text(encoding="utf-8") + " ", encoding="utf-8")
    assert fingerprint.salt() != copied


@pytest.mark.parametrize("library", ["sympy", "PyYAML", "jsonschema", "jsonschema-rs", "Jinja2"])
def test_a_library_version_changes_the_salt(library: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KB_SCHEMAS", raising=False)
    before = fingerprint.salt()
    real = fingerprint.library_version
    monkeypatch.setattr(
        fingerprint,
        "library_version",
        lambda name: real(name) + ".post1" if name == library else real(name),
    )
    fingerprint.code_fingerprint.cache_clear()
    assert fingerprint.salt() != before


def test_a_package_file_changes_the_salt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KB_SCHEMAS", raising=False)
    package = tmp_path / "kb"
    shutil.copytree(fingerprint.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprint, "PACKAGE", package)
    copied = fingerprint.code_fingerprint()
    for name in ("store.py", "theme/static/style.css", "data/seed-000.txt"):
        fingerprint.code_fingerprint.cache_clear()
        (package / name).write_bytes((package / name).read_bytes() + b"\n")
        changed = fingerprint.code_fingerprint()
        assert changed != copied, name
        copied = changed


def test_installed_versions_match_importlib_metadata() -> None:
    from importlib import metadata

    for name in fingerprint.LIBRARIES:
        assert fingerprint.library_version(name) == metadata.version(name)
