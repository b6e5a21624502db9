"""The Jinja2 environment of the site: templates from the theme's `templates/`, autoescaped.

Every page is rendered with `root` (the relative way back to the site root), so
links work from file:// as well as from any web server path.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from kb.sitegen import urls


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
    return env


def render_page(
    env: jinja2.Environment, template: str, page: str, context: Mapping[str, Any]
) -> str:
    """Render `template` as the page at relative path `page`."""
    return env.get_template(template).render(root=urls.root_of(page), page=page, **context)
