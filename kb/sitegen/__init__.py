"""The static reference site: `build(kb, out_dir)` renders the templates in `site/`.

Modules: `build` (the table of contents), `output` (staging, incremental writes,
publishing by renames or a whole swap), `render` (Jinja2), context builders per
page type (`record_page`, `tables`, `catalogue`, `methodology`, `search`,
`equations_view`, `ledger_view`), `fields` (every field as a display tree),
`mathml` (MathML Core from the expression AST) and `charts` (deterministic SVG
data for the chart template).
"""
