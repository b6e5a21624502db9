"""`kb lsp`: run kb's language server on stdin/stdout (kb.lsp; needs the `lsp` extra)."""

from __future__ import annotations

import importlib.util

import click


@click.command()
def lsp() -> None:
    """Run the language server (stdio): kb's findings as diagnostics, completion, hover.

    Needs pygls: pip install 'kb-placement-tax[lsp]'. See docs/integrations.md for
    VS Code and Neovim.
    """
    if importlib.util.find_spec("pygls") is None:
        raise click.UsageError("kb lsp needs pygls: pip install 'kb-placement-tax[lsp]'")
    from kb.lsp import serve

    serve()
