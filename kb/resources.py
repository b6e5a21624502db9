"""The files kb reads at run time, shipped inside the package: schemas, the site theme, seed 000.

They are found through importlib.resources, so a wheel, `pip install .`, pre-commit's
hook environment and an editable checkout all read the same files. A records tree may
bring its own schemas: `KB_SCHEMAS=DIR` names a folder that replaces the packaged set
as a whole (it must hold every kind's schema). Anything missing or unreadable raises
`ResourceMissing`, which every command turns into a one-line message and exit 2:
kb never checks less because a file is absent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar

from kb import settings

T = TypeVar("T")

SCHEMAS_ENV = settings.SCHEMAS
# Schemas every run needs besides one per record kind (kb.model.KIND_BY_FOLDER).
SHARED_SCHEMAS = ("defs.schema.json", "equations.schema.json")
THEME_FILES = ("templates/base.html", "templates/record.html", "static/style.css")
SEED_000 = "seed-000.txt"
END_TO_END = "end-to-end.json"  # the end-to-end rules' declarations (kb.ledger)


class ResourceMissing(Exception):
    """A file kb needs at run time is missing or unreadable; kb stops (exit 2)."""


def _package_dir(name: str) -> Path:
    traversable = files("kb").joinpath(name)
    path = Path(str(traversable))
    if not path.is_dir():
        raise ResourceMissing(f"kb's packaged {name}/ folder is missing ({path}); reinstall kb")
    return path


def schemas_dir() -> Path:
    """Where the schemas are: $KB_SCHEMAS when set, else the package's own."""
    path = settings.schemas_dir()
    if path is not None:
        if not path.is_dir():
            raise ResourceMissing(f"{SCHEMAS_ENV}={path} is not a folder of schemas")
        return path
    return _package_dir("schemas")


def require_schemas(kinds: list[str]) -> list[Path]:
    """Every schema file kb needs, in name order; ResourceMissing names any that is absent."""
    folder = schemas_dir()
    needed = sorted({f"{kind}.schema.json" for kind in kinds} | set(SHARED_SCHEMAS))
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing:
        raise ResourceMissing(f"schemas missing from {folder}: {', '.join(missing)}")
    return sorted(folder.glob("*.schema.json"))


def theme_dir() -> Path:
    """The site's templates and static assets."""
    folder = _package_dir("theme")
    missing = [name for name in THEME_FILES if not (folder / name).is_file()]
    if missing:
        raise ResourceMissing(f"kb's site theme is incomplete ({folder}): {', '.join(missing)}")
    return folder


def seed_000_text() -> str:
    """Seed 000 (the placement-tax ledger), the methodology page's text."""
    path = _package_dir("data") / SEED_000
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResourceMissing(f"kb's methodology text is unreadable ({path}): {exc}") from None


def end_to_end_path() -> Path:
    """kb/data/end-to-end.json, where the end-to-end rules are declared."""
    return _package_dir("data") / END_TO_END


@lru_cache(maxsize=1)
def _end_to_end_document() -> dict[str, Any]:
    """kb/data/end-to-end.json, read and parsed once per process."""
    path = end_to_end_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _end_to_end_missing(path, exc) from None
    if not isinstance(data, dict):
        raise _end_to_end_missing(path, TypeError("not a JSON object"))
    return data


def _end_to_end_missing(path: Path, exc: Exception) -> ResourceMissing:
    """The one error of a missing or malformed end-to-end.json."""
    return ResourceMissing(f"kb's packaged {path} is missing or malformed ({exc}); reinstall kb")


def end_to_end(section: str | None, read: Callable[[Any], T]) -> T:
    """`read` of kb/data/end-to-end.json's `section` (the whole document when None).

    The file is read and parsed once per process; a missing or unparsable file, a
    missing section, or a section `read` cannot interpret (KeyError, TypeError,
    ValueError, AttributeError) raises ResourceMissing, kb's one-line error (exit 2).
    """
    data = _end_to_end_document()
    try:
        return read(data if section is None else data[section])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _end_to_end_missing(end_to_end_path(), exc) from None


def engine_versions(entry: Any) -> dict[str, tuple[str, ...]]:
    """A declaration's `{engine: {"versions": [...]}, ...}`: engine -> the versions it names."""
    return {
        engine: tuple(str(v) for v in node["versions"])
        for engine, node in entry.items()
        if isinstance(node, dict) and "versions" in node
    }
