"""`kb lsp`: run kb's language server on stdin/stdout (kb.lsp)."""

from __future__ import annotations

import sys

import click


@click.command()
def lsp() -> None:
    """Run the language server (stdio): kb's findings as diagnostics, completion, hover.

    An editor starts it; see docs/integrations.md for VS Code and Neovim.
    """
    from kb.lsp import serve

    sys.exit(serve())
