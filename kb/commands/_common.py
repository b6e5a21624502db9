"""Options and helpers shared by subcommands: where the records are, usage errors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

DEFAULT_ROOT = Path("records")


def records_root(root: Path | None, paths: Sequence[Path] = ()) -> Path:
    """The records tree: --root, else the `records` folder above a given path, else ./records."""
    if root is not None:
        return root
    for path in paths:
        for parent in [path.resolve(), *path.resolve().parents]:
            if parent.name == "records":
                return parent
    return DEFAULT_ROOT


def require_dir(root: Path) -> None:
    if not root.is_dir():
        raise click.UsageError(f"no records folder at {root} (use --root DIR)")


root_option = click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The records folder (default: ./records, or the one above the given paths).",
)
