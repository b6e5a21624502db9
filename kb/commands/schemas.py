"""`kb schemas export DIR`: kb's schemas for editors and check-jsonschema in any repository.

The packaged schemas carry `$id`s under https://kb.invalid/, which nothing can fetch.
The exported copies either drop `$id` (the default: their relative `$ref`s then resolve
against the files themselves, which is what yaml-language-server and plain
check-jsonschema do) or carry `$id`s under `--base-url`, for a self-published site.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def schemas() -> None:
    """Kb's JSON Schemas: export them for editors and other validators."""


@schemas.command("export")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--base-url",
    metavar="URL",
    default=None,
    help="Give each schema the $id URL/<name> (where you publish them); default: no $id.",
)
def export(directory: Path, base_url: str | None) -> None:
    """Write every schema into DIRECTORY (created if missing), ready for editors."""
    from kb.schema_export import write_schemas

    try:
        names = write_schemas(directory, base_url)
    except OSError as exc:
        reason = exc.strerror or exc
        raise click.UsageError(f"cannot write schemas to {directory}: {reason}") from None
    click.echo(f"wrote {len(names)} schemas to {directory}")
