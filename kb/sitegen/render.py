"""The Jinja2 environment of the site: templates from the theme's `templates/`, autoescaped.

Filters `unit` and `inf` show units and infinities as a reader reads them
(kb/numfmt.py). Every page is rendered with `root` (the relative way back to the site root), so
links work from file:// as well as from any web server path.

The templates read the page data (plain dicts) by key, `n["type"]`, not `n.type`:
Jinja tries an attribute first, and a failed attribute lookup on a dict raises and
catches an exception for every field printed (a third of a record page's
rendering at 10,000 records, BENCHMARKS.md). Objects (a Record, `loop`, `urls`)
keep the dot. The partials every page shares (links, badges, prose, the field
tree) are Python (kb.sitegen.html_nodes), not macros: they were a third of it; so
is a chart's figure (kb.sitegen.html_chart), which was the partial `_chart.html`.
Every page carries CONTENT_SECURITY_POLICY (base.html's <meta>).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from kb import numfmt
from kb.sitegen import html_chart, html_nodes, inline_code, urls

# Every page's Content-Security-Policy (a <meta> in base.html): only the site's own script
# and style files run (no inline script, no inline style, nothing from another origin);
# images are the site's own or data: URLs (the blank favicon); the search form submits
# to the site itself; no <base>, no plugins, no frames, no network requests from script.
# `'self'` covers the site served over HTTP; opened from file://, Chromium treats the
# page's own folder tree as 'self' too (tests/site/test_csp.py runs both).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'self'; object-src 'none'"
)


def make_environment(theme: Path) -> jinja2.Environment:
    """Strict, autoescaping environment; an unknown variable is a build error."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(theme / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # a build reads each template once
    )
    env.globals["urls"] = urls
    env.globals["csp"] = CONTENT_SECURITY_POLICY
    env.globals.update(html_nodes.GLOBALS)  # link, badge, parts, prose, node, state
    env.globals["chart_figure"] = html_chart.chart_figure  # was _chart.html
    env.filters["unit"] = lambda unit: html_nodes.unit_text(str(unit))  # us -> µs, B^-1 -> B⁻¹
    env.filters["inline"] = lambda text: Markup(inline_code.render(str(text)))  # `x` -> math
    env.filters["verbatim"] = lambda text: Markup(inline_code.render(str(text), maths=False))
    env.filters["plain"] = lambda text: inline_code.plain(str(text))  # `x` -> x in code blocks
    env.filters["inf"] = lambda text: numfmt.infinity_text(str(text))  # oo -> ∞
    return env


def render_page(
    env: jinja2.Environment, template: str, page: str, context: Mapping[str, Any]
) -> str:
    """Render `template` as the page at relative path `page`.

    The page's <body> names the template that wrote it (`data-template`): the browser
    tests sample the built site per template (tests/site/sample_pages.py).
    """
    return env.get_template(template).render(
        root=urls.root_of(page), page=page, page_template=template, **context
    )
