"""The site's shared partials in Python: links, badges, prose parts, the field tree, states.

These were Jinja macros (`link`, `badge`, `parts`, `prose`, `node`, `state` in the
theme's _macros.html); the recursive field tree made them a third of a record page's
rendering at 10,000 records (a macro call costs ~10 us of argument handling, and
a record page makes ~40 of them), so kb renders them here and the templates call
them as globals (kb.sitegen.render). They write exactly the bytes the macros
wrote — tests/site/test_html_nodes.py holds each one to the macro it replaced,
on every node of the shipped records' pages — and escape every value they print
(markupsafe, as Jinja's autoescape does). A theme that defines and imports its
own macros of the same names still gets its own: an imported name shadows a global.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import jinja2
from markupsafe import Markup, escape

from kb import numfmt
from kb.equations.verdict import state_words
from kb.sitegen import inline_code

NONE = '<span class="muted">\u2014</span>\n'


@lru_cache(maxsize=4096)
def unit_text(unit: str) -> str:
    """The `unit` filter: numfmt.unit_text, kept per unit (a site repeats a few dozen)."""
    return numfmt.unit_text(unit)


ESCAPED_MAX = 1 << 16  # strings whose escaped text is kept; past it the memo starts again
_ESCAPED: dict[str, str] = {}


def escaped(value: Any) -> str:
    """The text of markupsafe's `escape(value)`; a string's result is kept.

    Pages repeat most of the strings they print (the root, units, bases, field
    names: 86% of the calls at 1,000 records), and escape builds a Markup each
    time (half of a record page's rendering). A string's escape depends on the
    string alone, so a kept result is the same text.
    """
    if type(value) is str:
        done = _ESCAPED.get(value)
        if done is None:
            if len(_ESCAPED) >= ESCAPED_MAX:
                _ESCAPED.clear()
            done = _ESCAPED[value] = str(escape(value))
        return done
    return str(escape(value))


_e = escaped


def _t(value: Any) -> str:
    """Prose text: escaped, its `code spans` printed as MathML or <code> (inline_code)."""
    if type(value) is str and "`" in value:
        return inline_code.render(value)
    return escaped(value)


def link(root: str, ref: Mapping[str, Any]) -> str:
    """A link to a record (or a broken reference, marked)."""
    if ref["url"]:
        title = ref.get("title")
        titled = f' title="{_e(title)}"' if title else ""
        return f'<a href="{_e(root)}{_e(ref["url"])}"{titled}>{_e(ref["text"])}</a>'
    return f'<span class="broken-ref" title="no such record">{_e(ref["text"])}</span>'


def badge(root: str, provenance: Mapping[str, Any], compact: bool = False) -> str:
    """A figure's basis, and its source (a link; in `compact` cells only the word `source`)."""
    basis = _e(provenance["basis"])
    out = f'<span class="provenance"><span class="badge basis-{basis}">{basis}</span>'
    source = provenance["source"]
    if source:
        if not compact:
            cite = "source: " + link(root, source)
        elif source["url"]:
            cite = (
                f'<a href="{_e(root)}{_e(source["url"])}" title="source: {_e(source["text"])}">'
                "source</a>"
            )
        else:
            cite = f'<span class="broken-ref">{_e(source["text"])}</span>'
        out += f' <span class="cite">{cite}</span>'
    return out + "</span>"


def _external(href: Any, text: Any) -> str:
    return f'<a class="external" href="{_e(href)}" rel="noopener noreferrer">{_e(text)}</a>'


def parts(root: str, items: Any) -> str:
    """Prose with its figures, quotes, links and broken references (kb.sitegen.prose_view)."""
    out = []
    for part in items:
        kind = part["kind"]
        if kind == "figure":
            source = f"; source: {_e(part['source']['text'])}" if part["source"] else ""
            unit = part["unit"]
            shown = f' <span class="unit">{_e(unit_text(str(unit)))}</span>' if unit else ""
            out.append(
                f'<a class="templated basis-{_e(part["basis_class"])}" href="{_e(root)}'
                f'{_e(part["url"])}" title="{_e(part["title"])} ({_e(part["basis"])}{source})">'
                f'<span class="value">{_e(part["value"])}</span>{shown}</a>'
            )
        elif kind == "quote":
            if "parts" in part:
                inner = "".join(
                    _external(q["href"], q["text"])
                    if q["kind"] == "url"
                    else inline_code.render(q["text"], maths=False)
                    for q in part["parts"]
                )
            else:
                inner = inline_code.render(part["text"], maths=False)
            out.append(f'<q class="verbatim">{inner}</q>')
        elif kind == "url":
            out.append(_external(part["href"], part["text"]))
        elif kind == "broken":
            out.append(
                f'<span class="broken-ref" title="{_e(part["title"])}">{_e(part["text"])}</span>'
            )
        else:
            out.append(_t(part["text"]))
    return "".join(out)


def prose(root: str, text: Mapping[str, Any]) -> str:
    """A text node: its parts when it has any, else its text."""
    return parts(root, text["parts"]) if "parts" in text else _t(text["text"])


def node(root: str, tree: Any, compact: bool = False) -> str:
    """One node of a field tree (kb.sitegen.fields), children included; `compact` in cells."""
    if tree is None:
        return NONE
    kind = tree["type"]
    if kind == "quantity":
        return _quantity(root, tree, compact)
    if kind == "ref":
        return link(root, tree["link"]) + "\n"
    if kind == "url":
        return _external(tree["href"], tree["text"]) + "\n"
    if kind == "text":
        shown = prose(root, tree)
        return f'<div class="prose">{shown}</div>' if tree["long"] else shown
    if kind == "erratum":
        state = _e(tree["state"])
        return (
            f'<span class="erratum"><span class="state state-{state}">{state}</span> '
            f'<a href="#{_e(tree["anchor"])}">{_e(tree["claim"])}</a>: {_t(tree["text"])}</span>\n'
        )
    if kind == "scalar":
        return f'<span class="scalar">{_e(tree["text"])}</span>\n'
    if kind == "list":
        items = tree["items"]
        if not items:
            return '<span class="muted">(none)</span>'
        inner = "".join(f"<li>{node(root, item, compact)}</li>" for item in items)
        return f'<ol class="field-list">{inner}</ol>'
    if kind == "map":
        return _map(root, tree, compact)
    return ""


def _quantity(root: str, tree: Mapping[str, Any], compact: bool) -> str:
    unit = tree["unit"]
    shown = f' <span class="unit">{_e(unit_text(str(unit)))}</span>' if unit else ""
    out = f'<span class="quantity"><span class="value">{_e(tree["value"])}</span>{shown} '
    out += badge(root, tree["provenance"], compact)
    if not compact:
        for key, text in tree["extras"]:
            said = parts(root, text["parts"]) if _has_parts(text) else _t(text)
            out += f' <span class="extra"><span class="extra-key">{_e(key)}:</span> {said}</span>'
    return out + "</span>\n"


def _has_parts(text: Any) -> bool:
    return isinstance(text, Mapping) and "parts" in text


def _map(root: str, tree: Mapping[str, Any], compact: bool) -> str:
    out = []
    if tree["provenance"]:
        out.append(f'<p class="block-provenance">{badge(root, tree["provenance"])}</p>')
    out.append('<dl class="fields">')
    for item in tree["items"]:
        anchor = "" if compact else f' id="{_e(item["anchor"])}"'
        out.append(
            f"<dt{anchor}>{_e(item['key'])}</dt><dd>{node(root, item['node'], compact)}</dd>"
        )
    out.append("</dl>\n")
    return "".join(out)


def state(text: Any) -> str:
    """A check's state as a badge: class `state-` and the state, spaces dashed, brackets dropped.

    A state that is not a measurement's verdict (recomputed, derived, a bound that
    holds) says so in words beside its badge (kb.equations.verdict.STATE_WORDS).
    """
    word = text if isinstance(text, str) else str(text)  # Jinja's `replace` filter: soft_str
    shown = word.replace(" ", "-").replace("(", "").replace(")", "")
    words = state_words(word)
    note = f' <span class="state-words">({_e(words)})</span>' if words else ""
    return f'<span class="state state-{_e(shown)}">{_e(text)}</span>{note}'


# ---- the templates' globals: the page's `root` from the context, Markup out ----------------


@jinja2.pass_context
def link_global(context: Any, ref: Mapping[str, Any]) -> Markup:
    return Markup(link(context["root"], ref))


@jinja2.pass_context
def badge_global(context: Any, provenance: Mapping[str, Any], compact: bool = False) -> Markup:
    return Markup(badge(context["root"], provenance, compact))


@jinja2.pass_context
def parts_global(context: Any, items: Any) -> Markup:
    return Markup(parts(context["root"], items))


@jinja2.pass_context
def prose_global(context: Any, text: Mapping[str, Any]) -> Markup:
    return Markup(prose(context["root"], text))


@jinja2.pass_context
def node_global(context: Any, tree: Any, compact: bool = False) -> Markup:
    return Markup(node(context["root"], tree, compact))


def state_global(text: Any) -> Markup:
    return Markup(state(text))


GLOBALS = {
    "link": link_global,
    "badge": badge_global,
    "parts": parts_global,
    "prose": prose_global,
    "node": node_global,
    "state": state_global,
}
