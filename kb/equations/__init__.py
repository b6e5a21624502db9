"""The equations engine: records' maths parsed safely, dimension-checked, re-derived, checked.

Nothing here evaluates record text: expressions go through `ast.parse` + a
whitelist + a SymPy builder (expr.py). Units come from kb.quantities (the one
unit table, below this package). Modules, in import order:

- results.py the states, Item and Issue every check produces; no SymPy
- dims.py    dimension checking of an authored expression tree; no SymPy
- expr.py    the safe expression language and its printer
- bind.py    bindings: literal quantities or `record-id#dotted.path` fields; no SymPy
- compose.py `uses:` entries resolved to the equation text of another record; no SymPy
- system.py  a record's symbols and parsed, dimension-checked equations
- algebra.py identity decisions (cancel, then simplify under a budget, then sampled points)
- derive.py  derivation steps, one check per rule in `derive.RULES`: define, solve_for,
             substitute, rewrite, scale, approximate, limit, regime
- claimbase.py the SymPy-free half of claims: bindings, expect, comparison, outcomes
- numtext.py  kb's own exact number texts (correctly rounded), for every judged value
- exact.py    exact evaluation of a compiled expression tree with fractions; no SymPy
- plan.py     replay a record's plan for new bound values (no SymPy)
- claims.py  numeric, scaling and effect claims
- rewrites.py effects that replace a term of an equation (solve before and after)
- figures.py a model's parameter counts recomputed from its geometry; no SymPy
- timeout.py a wall-clock budget (SIGALRM in the main thread, a forked child elsewhere,
  a stoppable helper thread where neither exists: threadbudget.py)
- shared.py  symbolic work records with the same maths share, once per run (SharedWork)
- planbuild.py a record's check (the one path: shared work, compiled claims replayed
             exactly, SymPy where they cannot answer), writing its plan on the way
- cache.py   the results kept between runs: a view of kb's one store (kb.store)
- engine.py  one memoised analysis of a whole KnowledgeBase, with the reverse binding index;
             cold runs spread families of records over kb's fork pool (kb.workers)
- evaluate.py evaluation of one equation at given bindings, for `kb calc`
- verdict.py a record's one-line verdict and the state texts kb show and the site print

API for the site, the rules and the commands:

- `expr.parse_equation(text, symbols)` -> ParsedEquation with `.lhs/.rhs`, each a
  `Parsed(source, tree, value)`: `tree` is the validated `ast` node as authored
  (render MathML from it), `value` the SymPy expression; `expr.parse_expression`
  for one side; `expr.to_text(sympy_expr)` prints back in the safe language.
- `system.build_system(record.data)` -> System(symbols, units, equations, definitions()).
- `engine.analyse(kb)` -> Analysis; `.results[record_id]` is a RecordResult whose
  `items` are `Item(section, id, pointer, state, detail, claimed, computed, kind, ...)`
  with a state that says what was checked (results.py: consistent, derived,
  recomputed, validated, holds, contradicted, explained, erratum, refuted, unverified,
  invalid), and whose `issues` become EQ findings (who binds whom is for
  kb.reads.DependencyGraph to say). `Analysis.stats` (kb.run.RunStats) counts records really
  checked (`symbolic`), re-checked from their plan (`planned`: bound values changed,
  equation sections not: exact fractions, no SymPy) and cache hits (`cached`);
  `built_systems`, `built_claims`, `built_derivations` what the run really built
  (its workers too), once per distinct text (`Analysis.shared`, shared.py).
- `evaluate.evaluate(kb, record, target, bindings)` -> Evaluation(value, unit, trail);
  `evaluate.binding_spec("63 GB/s")` turns command-line text into a binding.
- units: `kb.quantities.parse_unit(text)` -> Unit(text, factor, dims);
  `kb.quantities.convert(value, a, b)`.
"""
