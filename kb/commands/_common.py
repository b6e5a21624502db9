"""Options and helpers shared by subcommands: where the records are, usage errors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from kb.model import FOLDER_BY_KIND, KIND_NAMES, KINDS, kind_named

DEFAULT_ROOT = Path("records")


def records_root(root: Path | None, paths: Sequence[Path] = ()) -> Path:
    """The records tree: --root; else the `records` folder above a given path; else upward.

    Upward, as ruff finds its configuration: the working directory or the nearest folder
    above it that is named `records` or holds one (so `kb validate` works from
    records/hardware/ or from any subfolder of the repository). ./records when none is.
    """
    if root is not None:
        return root
    for path in paths:
        for parent in [path.resolve(), *path.resolve().parents]:
            if parent.name == "records":
                return parent
    return _records_upward() or DEFAULT_ROOT


def _records_upward() -> Path | None:
    here = Path.cwd()
    if (here / DEFAULT_ROOT).is_dir():
        return DEFAULT_ROOT  # the usual case, printed as before: records/...
    for folder in [here, *here.parents]:
        if folder.name == DEFAULT_ROOT.name and folder.is_dir():
            return folder
        if (folder / DEFAULT_ROOT).is_dir():
            return folder / DEFAULT_ROOT
    return None


def require_dir(root: Path) -> None:
    if not root.is_dir():
        raise click.UsageError(f"no records folder at {root} (use --root DIR)")


root_option = click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The records folder (default: the one above the given paths, else ./records or the "
    "nearest above the working directory).",
)


# click 8.2+ types Choice as generic, but click 8.1 (which kb supports) cannot subscript it
class KindChoice(click.Choice):  # type: ignore[type-arg]
    """A record kind typed by its name or its folder (`flop_class` or `flops`): the kind.

    Every command that takes a kind (`kb new KIND`, `kb list --kind`) uses this one
    resolver (kb.model.kind_named), so a name one accepts the other accepts too.
    """

    name = "kind"

    def __init__(self) -> None:
        super().__init__(KIND_NAMES, case_sensitive=False)

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        kind = kind_named(str(value))
        if kind is not None:
            return kind
        from kb.suggest import did_you_mean

        pairs = ", ".join(f"{k} ({FOLDER_BY_KIND[k]})" for k in KINDS)
        hint = did_you_mean(str(value), KIND_NAMES)
        meant = f" ({hint})" if hint else ""
        self.fail(
            f"{str(value)!r} is not a kind{meant}; the kinds, each with its folder: {pairs}",
            param,
            ctx,
        )


KIND = KindChoice()
