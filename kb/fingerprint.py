"""The one salt of everything kb keeps between runs: what a result depends on besides its input.

`salt()` is a BLAKE2b content hash of:

- kb's code: every file of the package (its .py files, the packaged schemas,
  the site theme and seed 000), by path and bytes; editing any of them, or
  installing another kb, changes the salt;
- the versions of Python and of the libraries that shape a result: PyYAML
  (parsing), jsonschema, referencing and jsonschema-rs (schema findings),
  SymPy and mpmath (the equations), Jinja2 and MarkupSafe (the site);
- the schemas in use, by name and bytes: the packaged set, or the folder
  $KB_SCHEMAS names.

Every store (kb.store) is opened under this salt: the record results, the
equations results, the run snapshot and the site manifest. A different salt
reads as an empty store, so a result computed by other code, other libraries or
other schemas is never served. The code and library part is hashed once per
process (the code that is running cannot change under it); the schemas are
hashed on every call, since $KB_SCHEMAS may change between runs of one process.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from kb.model import KIND_BY_FOLDER
from kb.resources import require_schemas

FORMAT = "kb-fingerprint-1"
PACKAGE = Path(__file__).resolve().parent
LIBRARIES = (
    "PyYAML",
    "jsonschema",
    "referencing",
    "jsonschema-rs",
    "sympy",
    "mpmath",
    "Jinja2",
    "MarkupSafe",
)


def salt() -> str:
    """The salt of every store: kb's code, the library versions and the schemas in use."""
    schemas = require_schemas(sorted(KIND_BY_FOLDER.values()))
    digest = hashlib.blake2b(code_fingerprint().encode(), digest_size=16)
    hash_files(digest, "schemas", schemas[0].parent if schemas else PACKAGE, schemas)
    return digest.hexdigest()


@functools.cache
def code_fingerprint() -> str:
    """The package's files and the versions of Python and the libraries, hashed once."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{FORMAT}\n{sys.version}\n".encode())
    for name in LIBRARIES:
        digest.update(f"{name}={library_version(name)}\n".encode())
    hash_files(digest, "kb", PACKAGE, package_files(PACKAGE))
    return digest.hexdigest()


def folder_fingerprint(folder: Path) -> str:
    """A hash of every file under `folder` (a site theme), by relative path and bytes."""
    digest = hashlib.blake2b(digest_size=16)
    hash_files(digest, "folder", folder, package_files(folder))
    return digest.hexdigest()


def package_files(folder: Path) -> list[Path]:
    """The regular files under `folder`, sorted, without byte-code caches."""
    found: list[Path] = []
    for parent, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if name != "__pycache__"]
        found.extend(Path(parent, name) for name in names if not name.endswith(".pyc"))
    return sorted(path for path in found if path.is_file())


def hash_files(digest: Any, label: str, folder: Path, paths: Iterable[Path]) -> None:
    """Feed `digest` each file's path (relative to `folder`) and a hash of its bytes."""
    for path in paths:
        name = path.relative_to(folder).as_posix() if path.is_relative_to(folder) else path.name
        digest.update(f"{label}:{name}\n".encode("utf-8", "surrogateescape"))
        digest.update(hashlib.blake2b(path.read_bytes(), digest_size=16).digest())


def library_version(name: str) -> str:
    """The installed version of a distribution ("-" if it is not installed)."""
    found = _installed().get(_normal(name))
    if found is not None:
        return found
    try:  # not found by its folder name: ask importlib.metadata (slower, ~2 ms)
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


@functools.cache
def _installed() -> dict[str, str]:
    """Name -> version from the `.dist-info` folders on sys.path (the first wins, as for imports).

    One listing per path entry instead of importlib.metadata's search per name.
    """
    versions: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in names:
            if folder.endswith(".dist-info"):
                name, _, version = folder[: -len(".dist-info")].partition("-")
                versions.setdefault(_normal(name), version)
    return versions


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()
