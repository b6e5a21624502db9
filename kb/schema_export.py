"""kb's schemas as other tools read them: `$id`s that resolve, or none (relative `$ref`s).

Used by `kb schemas export` and by the site, which publishes the schemas it validates with.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kb.schema import load_schemas


def exported(schema: dict[str, Any], name: str, base_url: str | None) -> dict[str, Any]:
    """The schema with `$id` set under `base_url`, or dropped so `$ref`s resolve file-relative."""
    out = {key: value for key, value in schema.items() if key != "$id"}
    if base_url:
        out = {"$schema": schema.get("$schema"), "$id": base_url.rstrip("/") + "/" + name, **out}
        if out["$schema"] is None:
            del out["$schema"]
    return out


def exported_text(name: str, base_url: str | None) -> str:
    return json.dumps(exported(load_schemas()[name], name, base_url), indent=2) + "\n"


def write_schemas(directory: Path, base_url: str | None) -> list[str]:
    """Write every schema into `directory` atomically, file by file; return their names."""
    directory.mkdir(parents=True, exist_ok=True)
    names = sorted(load_schemas())
    for name in names:
        target = directory / name
        tmp = directory / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(exported_text(name, base_url), encoding="utf-8")
        tmp.replace(target)
    return names
