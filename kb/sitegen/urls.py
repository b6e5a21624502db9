"""Stable URLs of the published site, all relative to its root (works from file:// too)."""

from __future__ import annotations

import re

from kb.model import FOLDER_BY_KIND

HOME = "index.html"
SEARCH = "search.html"
SEARCH_INDEX = "search-index.js"
CALC_RECORDS = "calc-records.js"  # the calculators' pickers, once per site (calc_records)
HARDWARE_TABLE = "compare/hardware.html"
CHARTS = "charts/index.html"
RULES = "rules/index.html"
METHODOLOGY = "methodology.html"
STATUS = "status.html"  # validation status (kb.sitegen.build.write_home)
SCHEMAS = "schemas/index.html"


def record_page(record_id: str) -> str:
    """`hardware/nvidia-h100-sxm` -> `records/hardware/nvidia-h100-sxm.html`."""
    return f"records/{record_id}.html"


def record_json(record_id: str) -> str:
    """Return the record's JSON URL, which never changes while the id does not."""
    return f"records/{record_id}.json"


def kind_index(kind: str) -> str:
    """Return the index page of one kind, in its records folder."""
    return f"records/{FOLDER_BY_KIND.get(kind, kind)}/index.html"


def schema_json(name: str) -> str:
    """Return a JSON Schema's URL by its file name (`accelerator.schema.json`)."""
    return f"schemas/{name}"


def rule_anchor(code: str) -> str:
    """Return the rules catalogue entry of one rule code."""
    return f"{RULES}#{code}"


def field_anchor(dotted: str) -> str:
    """Return the HTML id of a record field (`memory.bandwidth` -> `f-memory.bandwidth`)."""
    return f"f-{_UNSAFE.sub('-', dotted)}"


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")  # one regex pass, not a generator per character


def root_of(page: str) -> str:
    """Return the way from `page` back to the site root (`records/a/b.html` -> `../../`)."""
    return "../" * page.count("/")


_SAFE_URL = re.compile(r"https?://[^\s<>\"'`\x00-\x1f\x7f]+\Z", re.IGNORECASE)
_HOST_ONLY = frozenset("[]")


def external(text: str) -> str | None:
    """`text` as a link target if it is a plain http(s) URL with a host, else None.

    Anything else (`javascript:`, `data:`, `file:`, a relative path, text with spaces
    or quotes, a bracket outside an IP-literal host: an invalid href) is shown as text,
    never linked.
    """
    from urllib.parse import urlsplit

    candidate = text.strip()
    if not _SAFE_URL.match(candidate):
        return None
    try:
        parts = urlsplit(candidate)
        host = parts.hostname
    except ValueError:  # an unbalanced IPv6 bracket in the host
        return None
    if set(parts.path + parts.query + parts.fragment) & _HOST_ONLY:
        return None  # brackets are legal only around an IP literal host (RFC 3986, 3.2.2)
    return candidate if parts.scheme.lower() in ("http", "https") and host else None


EXPLORE = "explore/index.html"  # the placement explorer (kb.sitegen.plan_pages)
PLANS = "plans/index.html"  # the planner's worked tables, every model and common node


def explore_data(model_id: str) -> str:
    """Return the explorer's data file of one model (`models/x` -> `explore/data/x.js`)."""
    return f"explore/data/{model_id.split('/', 1)[-1]}.js"


def plan_table(model_id: str, hardware_id: str, count: int, nodes: int) -> str:
    """Return the worked table of a model on a node shape (`plans/<model>/<hw>-8x1.html`)."""
    model, hardware = model_id.split("/", 1)[-1], hardware_id.split("/", 1)[-1]
    return f"plans/{model}/{hardware}-{count}x{nodes}.html"


def plan_model(model_id: str) -> str:
    """Return the page of one model's worked tables, linked from its record page."""
    return f"plans/{model_id.split('/', 1)[-1]}/index.html"


def plan_hardware(hardware_id: str) -> str:
    """Return the page of one accelerator's worked tables, linked from its record page."""
    return f"plans/hardware/{hardware_id.split('/', 1)[-1]}.html"
