"""Rule codes typed on the command line (`--select`, `--ignore`): checked as ruff checks them.

A value is a code (`SC001`) or a prefix of one (`SC`, `EQ00`), in any case;
several may be given with commas (`--select SC,RF`) or by repeating the option.
A value no registered code starts with is a usage error (exit 2) that names
every unknown value, with the closest code or prefix ("did you mean SC001?"),
so a typo can never select nothing and report a clean tree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import click

_Command = TypeVar("_Command", bound=Callable[..., Any])


def registered_codes() -> tuple[str, ...]:
    """Every rule code in the catalogue, in catalogue order."""
    from kb.rules import all_rules

    return tuple(rule.CODE for rule in all_rules())


def split_codes(values: Iterable[str]) -> tuple[str, ...]:
    """The codes in `values` (repeated options, each maybe comma-separated), upper-cased."""
    return tuple(part.strip().upper() for value in values for part in value.split(","))


def unknown_codes(codes: Iterable[str], known: Sequence[str]) -> list[str]:
    """The entries of `codes` that are empty or that no code in `known` starts with."""
    bad = [code for code in codes if not code or not any(k.startswith(code) for k in known)]
    return list(dict.fromkeys(bad))  # each once, in the order typed


def suggestion(code: str, known: Sequence[str]) -> str | None:
    """The registered code or family prefix closest to a mistyped `code` (kb.suggest)."""
    if not code:
        return None
    from kb.suggest import closest

    return closest(code, {*known, *(k[:2] for k in known)})


def describe_unknown(unknown: Sequence[str], known: Sequence[str]) -> str:
    """The usage message for unknown codes: each named, with a suggestion where one is close."""
    parts = []
    for code in unknown:
        if not code:
            parts.append("an empty code (check for a stray comma)")
            continue
        close = suggestion(code, known)
        parts.append(f"{code}; did you mean {close}?" if close else code)
    noun = "rule code or prefix" if len(unknown) == 1 else "rule codes or prefixes"
    return f"unknown {noun}: " + ", ".join(parts) + " (`kb rules` lists them)"


def codes_callback(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    """Click callback: the option's codes, or a usage error naming the unknown ones."""
    codes = split_codes(values)
    if not codes:
        return ()
    known = registered_codes()
    unknown = unknown_codes(codes, known)
    if unknown:
        raise click.BadParameter(describe_unknown(unknown, known), ctx=ctx, param=param)
    return codes


def codes_option(name: str, help_text: str) -> Callable[[_Command], _Command]:
    """A repeatable `--select`-style option whose values are checked against the catalogue."""
    return click.option(
        name, multiple=True, metavar="CODE[,CODE...]", callback=codes_callback, help=help_text
    )
