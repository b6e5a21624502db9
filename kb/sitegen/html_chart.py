"""A chart's figure in Python: the SVG, its caption and legend, the data behind it.

This was the theme's `_chart.html`, included once per chart on a flop class's or
a placement's page and on the charts page; a chart prints hundreds of values
(ticks, bars, marks), each an escape and a yield in Jinja (a third of a flop
class page's rendering). It writes exactly the bytes the template wrote —
tests/site/test_html_chart.py holds it to the template (fixtures/chart_before.html)
on every chart of the shipped records and on charts whose every text is hostile
markup — and escapes every value it prints (markupsafe, as Jinja's autoescape
does, through html_nodes.escaped). The chart is plain data (kb.sitegen.charts,
flop_chart, ledger_view); the templates call it as the global `chart_figure`
(kb.sitegen.render).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from kb.sitegen.html_nodes import escaped as _e

ERRATUM_CROSS = '<path class="erratum-cross" d="M2,2L10,10M2,10L10,2"/>'
LEGEND_POINT = '<circle cx="6" cy="6" r="4"/>'


def chart_figure(chart: Mapping[str, Any]) -> Markup:
    """The template global: the chart's markup, marked safe (every value in it escaped)."""
    return Markup(figure(chart))


def figure(chart: Mapping[str, Any]) -> str:
    """One chart: `<figure>` with its SVG and caption, then its data tables if it has any."""
    anchor = _e(chart["anchor"])
    width, height = _e(chart["width"]), _e(chart["height"])
    out = [
        f'<figure class="chart" id="{anchor}">\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img"'
        f' aria-labelledby="{anchor}-title {anchor}-desc">\n'
        f'<title id="{anchor}-title">{_e(chart["title"])}</title>\n'
        f'<desc id="{anchor}-desc">{_e(chart["desc"])}</desc>\n'
    ]
    _axes(chart, out)
    for index, series in enumerate(chart["series"]):
        _series(index, series, out)
    plot = chart["plot"]
    top, bottom = _e(plot["top"]), _e(plot["bottom"])
    for mark in chart["marks"]:
        _mark(mark, top, bottom, out)
    out.append(f"</svg>\n<figcaption>{_e(chart['caption'])}\n")
    _legend(chart, out)
    out.append("</figcaption>\n</figure>\n")
    if chart["tables"]:
        _tables(chart["tables"], out)
    return "".join(out)


def _axes(chart: Mapping[str, Any], out: list[str]) -> None:
    plot = chart["plot"]
    left, right, top, bottom = (_e(plot[side]) for side in ("left", "right", "top", "bottom"))
    out.append(
        f'<g class="axes">\n<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}"/>\n'
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}"/>\n'
    )
    tick_y = _e(plot["bottom"] + 16)
    for tick in chart["x_ticks"]:
        pos = _e(tick["pos"])
        out.append(
            f'<line class="grid" x1="{pos}" y1="{top}" x2="{pos}" y2="{bottom}"/>'
            f'<text class="tick" x="{pos}" y="{tick_y}" text-anchor="middle">'
            f"{_e(tick['label'])}</text>\n"
        )
    tick_x = _e(plot["left"] - 6)
    for tick in chart["y_ticks"]:
        pos = _e(tick["pos"])
        out.append(
            f'<line class="grid" x1="{left}" y1="{pos}" x2="{right}" y2="{pos}"/>'
            f'<text class="tick" x="{tick_x}" y="{_e(tick["pos"] + 4)}" text-anchor="end">'
            f"{_e(tick['label'])}</text>\n"
        )
    middle_x = _e((plot["left"] + plot["right"]) / 2)
    middle_y = _e((plot["top"] + plot["bottom"]) / 2)
    out.append(
        f'<text class="axis-label" x="{middle_x}" y="{_e(chart["height"] - 6)}"'
        f' text-anchor="middle">{_e(chart["x_label"])}</text>\n'
        f'<text class="axis-label" x="14" y="{middle_y}" text-anchor="middle"'
        f' transform="rotate(-90 14 {middle_y})">{_e(chart["y_label"])}</text>\n</g>\n'
    )


def _series(index: int, series: Mapping[str, Any], out: list[str]) -> None:
    out.append(f'<g class="series series-{index % 8}">\n')
    if series["path"]:
        out.append(f'<path d="{_e(series["path"])}"><title>{_e(series["name"])}</title></path>')
    for bar in series["bars"]:
        out.append(
            f'<rect x="{_e(bar["x"])}" y="{_e(bar["y"])}" width="{_e(bar["w"])}"'
            f' height="{_e(bar["h"])}"><title>{_e(bar["title"])}</title></rect>\n'
        )
    out.append("</g>\n")


def _mark(mark: Mapping[str, Any], top: str, bottom: str, out: list[str]) -> None:
    erratum = mark.get("erratum")
    classes = (
        (" mark-infeasible" if mark["infeasible"] else "")
        + (" mark-point" if not mark["line"] else "")
        + (" mark-erratum" if erratum else "")
    )
    out.append(f'<g class="mark{classes}"><title>{_e(mark["title"])}</title>\n')
    if mark["line"]:
        x = _e(mark["x"])
        out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}"/>')
    if erratum:
        out.append(f'<path class="erratum-cross" d="{_e(mark["cross"])}"/>')
        if mark["label"]:
            out.append(
                f'<text x="{_e(mark["label_x"])}" y="{_e(mark["label_y"])}"'
                f' class="mark-label erratum-label" text-anchor="{_e(mark["anchor"])}">'
                f"{_e(mark['label'])}</text>"
            )
    elif mark["y"] is not None:
        out.append(f'<circle cx="{_e(mark["x"])}" cy="{_e(mark["y"])}" r="4"/>')
    if erratum:
        pass
    elif mark["label"] and mark.get("rotate"):
        label_x, label_y = _e(mark["label_x"]), _e(mark["label_y"])
        out.append(
            f'<text x="{label_x}" y="{label_y}" class="mark-label" text-anchor="end"'
            f' transform="rotate(-90 {label_x} {label_y})">{_e(mark["label"])}</text>'
        )
    elif mark["label"]:
        out.append(
            f'<text x="{_e(mark["x"] + 2)}" y="{_e(mark["label_y"])}" class="mark-label">'
            f"{_e(mark['label'])}</text>"
        )
    out.append("</g>\n")


def _legend(chart: Mapping[str, Any], out: list[str]) -> None:
    marks = chart.get("legend_marks", [])
    if not (chart["legend"] or chart.get("legend_marks")):
        return
    out.append('<ul class="legend">')
    for index, name in enumerate(chart["legend"]):
        out.append(f'<li><span class="swatch series-{index % 8}"></span>{_e(name)}</li>')
    for item in marks:
        shape = ERRATUM_CROSS if item["kind"] == "erratum" else LEGEND_POINT
        out.append(
            f'<li class="legend-{_e(item["kind"])}"><svg class="legend-mark" width="12"'
            f' height="12" viewBox="0 0 12 12" aria-hidden="true">{shape}</svg>'
            f"{_e(item['text'])}</li>"
        )
    out.append("</ul>")


def _tables(tables: Any, out: list[str]) -> None:
    out.append('<details class="chart-data"><summary>Data behind the chart</summary>\n')
    for table in tables:
        caption = table.get("caption")
        out.append('<div class="table-scroll"><table>')
        if caption:
            out.append(f"<caption>{_e(table['caption'])}</caption>")
        head = "".join(f'<th scope="col">{_e(h)}</th>' for h in table["head"])
        body = "".join(
            "<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>"
            for row in table["rows"]
        )
        out.append(f"<thead><tr>{head}</tr></thead>\n<tbody>{body}</tbody></table></div>\n")
    out.append("</details>\n")
