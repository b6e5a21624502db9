"""kb.equations.algebra: expanding definitions stops at inputs, kept symbols and cycles."""

from __future__ import annotations

import sympy as sp

from kb.equations.algebra import expand_definitions

a, b, c, d, k = sp.symbols("a b c d k", positive=True)


def test_a_chain_of_definitions_expands_to_its_inputs() -> None:
    definitions = {a: 2 * b, b: c + d, c: 3 * k}
    assert expand_definitions(a, definitions) == 2 * (3 * k + d)


def test_a_kept_symbol_is_not_expanded() -> None:
    assert expand_definitions(a, {a: 2 * b, b: c + d}, keep=[b]) == 2 * b


def test_a_definition_and_its_inverse_leave_both_as_inputs() -> None:
    # alpha = T*k*m/BW and T = alpha*BW/(k*m): substituting around the cycle used to
    # stop after 20 rounds at alpha*(m's definition)/m, a symbol mixed with its definition
    definitions = {a: b * k * c, b: a / (k * c), c: d + 1}
    expanded = expand_definitions(a + c, definitions)
    assert expanded == a + d + 1


def test_a_chain_longer_than_twenty_reaches_its_input() -> None:
    chain = sp.symbols("s0:30", positive=True)
    definitions = {chain[i]: chain[i + 1] + 1 for i in range(29)}
    assert expand_definitions(chain[0], definitions) == chain[29] + 29
