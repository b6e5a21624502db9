"""The `kb` command line: a click group whose subcommands are imported only when run.

Each subcommand lives in `kb/commands/<name>.py`; this module only maps names to
them, so `kb --help` and `kb explain` never import SymPy, Jinja2 or the site code.
Exit codes: 0 clean, 1 findings, 2 usage error or a fault in kb itself.
"""

from __future__ import annotations

import gc
import importlib
import sys

import click

# name -> (module, attribute, one-line help). Keep in alphabetical order.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "build": ("kb.commands.build", "build", "Validate, then write the static reference site."),
    "calc": ("kb.commands.calc", "calc", "Evaluate a record's equation for new inputs."),
    "diff": ("kb.commands.diff", "diff", "What a change does to the knowledge (BASE [HEAD])."),
    "explain": ("kb.commands.explain", "explain", "Print a rule's documentation."),
    "ledger": ("kb.commands.ledger", "ledger", "Print the placement-tax ledger of a placement."),
    "list": ("kb.commands.listing", "list_records", "List records (optionally one kind)."),
    "lsp": ("kb.commands.lsp", "lsp", "Run the language server (stdio) for editors."),
    "new": ("kb.commands.new", "new", "Write a skeleton record that names its schema."),
    "plan": ("kb.commands.plan", "plan", "Every placement of a model on given devices, compared."),
    "rules": ("kb.commands.explain", "rules", "List the rule catalogue."),
    "schemas": ("kb.commands.schemas", "schemas", "Export kb's JSON Schemas for editors."),
    "show": ("kb.commands.show", "show", "Print a record with its references resolved."),
    "validate": ("kb.commands.validate", "validate", "Validate records: schema, rules, equations."),
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        module = importlib.import_module(spec[0])
        command: click.Command = getattr(module, spec[1])
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List commands from the table above, without importing any of them."""
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kb-placement-tax")
def cli() -> None:
    """kb: the compute-placement-tax knowledge base and the tool that keeps it honest."""
    from kb import settings  # NO_COLOR / FORCE_COLOR: read, as every setting, in kb.settings

    click.get_current_context().color = settings.colour()


def main() -> None:
    """Entry point of the console script; maps uncaught faults to exit code 2."""
    from kb.resources import ResourceMissing
    from kb.usage import UsageProblem

    try:
        cli.main(standalone_mode=True)
    except SystemExit:
        _skip_final_collection()
        raise
    except UsageProblem as exc:  # bad input below the command line, e.g. an environment setting
        click.echo(f"kb: {exc}", err=True)
        sys.exit(2)
    except ResourceMissing as exc:  # kb is installed without a file it needs: never check less
        click.echo(f"kb: {exc}", err=True)
        sys.exit(2)
    except Exception as exc:  # a fault in kb itself, never a traceback for users
        click.echo(f"kb: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(2)


def _skip_final_collection() -> None:
    """Spare the exiting process a collection of every record it loaded (~0.2 s at 10,000).

    Only the console script: the interpreter frees the process's memory anyway, and a
    library caller of kb.api gets the collector as it was (kb.gcpause).
    """
    gc.disable()
    gc.freeze()
