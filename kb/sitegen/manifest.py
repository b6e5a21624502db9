"""The build manifest: which inputs each page of the last build was rendered from.

Kept in the output folder (`.kb-build-manifest.json`), so it is swapped in with
the pages it describes and can never disagree with them. It maps each page to
its key (kb.sitegen.deps) and each record to the anchors of its charts (the
charts page lists them without re-rendering the record), and keeps the few
charts the charts page draws in full (plain JSON data, rendered by the
autoescaping template like any other). A page whose key is
unchanged is hard-linked from the previous build instead of being rendered.
The fingerprint part of every key covers kb's code, the templates and static
files, and the versions of Python and the libraries that shape the output, so
changing any of them re-renders everything. A missing or malformed manifest
means a full build; it is parsed as JSON, never executed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

MANIFEST = ".kb-build-manifest.json"
FORMAT = 2
KB_PACKAGE = Path(__file__).resolve().parents[1]
LIBRARIES = ("jinja2", "markupsafe", "sympy", "pyyaml")


@dataclass
class Manifest:
    """Page -> key, record id -> its chart anchors, and the charts drawn on the charts page."""

    pages: dict[str, str] = field(default_factory=dict)
    charts: dict[str, list[str]] = field(default_factory=dict)
    inline: dict[str, Any] = field(default_factory=dict)

    def to_text(self) -> str:
        payload = {
            "format": FORMAT,
            "pages": self.pages,
            "charts": self.charts,
            "inline": self.inline,
        }
        return json.dumps(payload, sort_keys=True, separators=(",", ":")) + "\n"


def load_manifest(site: Path | None) -> Manifest:
    """Read the previous build's manifest; anything unexpected reads as none."""
    if site is None:
        return Manifest()
    try:
        payload = json.loads((site / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Manifest()
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        return Manifest()
    pages, charts, inline = payload.get("pages"), payload.get("charts"), payload.get("inline")
    if not (isinstance(pages, dict) and isinstance(charts, dict) and isinstance(inline, dict)):
        return Manifest()
    return Manifest(
        {k: v for k, v in pages.items() if isinstance(k, str) and isinstance(v, str)},
        {
            k: [str(a) for a in v]
            for k, v in charts.items()
            if isinstance(k, str) and isinstance(v, list)
        },
        {
            k: v
            for k, v in inline.items()
            if isinstance(v, list) and all(isinstance(c, dict) for c in v)
        },
    )


def fingerprint(theme: Path) -> str:
    """Hash kb's source, the theme's files and the versions that shape the output."""
    digest = hashlib.blake2b(_code_fingerprint().encode(), digest_size=16)
    _hash_folder(digest, "theme", theme, "*")
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """Hash kb's code and library versions once per process: the code that is running.

    (The theme is hashed on every build: templates are read afresh by each build.)
    """
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{FORMAT}\n{sys.version}\n".encode())
    for name in LIBRARIES:
        digest.update(f"{name}={_version(name)}\n".encode())
    _hash_folder(digest, "kb", KB_PACKAGE, "*.py")
    return digest.hexdigest()


def _hash_folder(digest: Any, label: str, folder: Path, pattern: str) -> None:
    for path in sorted(p for p in folder.rglob(pattern) if p.is_file()):
        if "__pycache__" in path.parts:
            continue
        digest.update(f"{label}:{path.relative_to(folder).as_posix()}\n".encode())
        digest.update(hashlib.blake2b(path.read_bytes(), digest_size=16).digest())


def _version(name: str) -> Any:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
