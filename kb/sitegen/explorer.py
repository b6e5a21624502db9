"""The placement explorer's data: every configuration its menus can select, priced by kb.plan.

One evaluator (issue 36 item 3). The page (templates/explore.html, static/explore.js)
never computes: at build time every query the menus can form (a model on one of the
common nodes, a batch of the menu, prompt/output lengths of the menu, an engine of
the menu) is asked of kb.plan, the code behind `kb plan --format json`, and each
option of its report (one mapping of TP/PP/EP/DP degrees) is kept under its key,
its figures as the exact values the JSON prints (`p/q`) beside kb's own text for
them (kb.numfmt). The browser looks the chosen key up, so the page and the command
agree by construction (tests/site/test_explorer_browser.py sets configurations and
compares them with `kb plan --format json`).

The menus are small on purpose: each query prices every mapping through the composed
ledger, and the whole grid is part of a site build. The data is one script per
model (`window.KB_EXPLORE_DATA[model] = ...`, loaded when a reader picks the model),
its repeated strings (formulas, provenance) interned once per file. Each file is
kept from the last build while its inputs are unchanged (the model record and every
record of the kinds a price reads: INPUT_KINDS).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb import numfmt
from kb.model import KnowledgeBase, Record

# The common nodes (issue 36 item 4): accelerators of eight per node, one or two nodes.
COMMON_HARDWARE = (
    "hardware/nvidia-h100-sxm",
    "hardware/nvidia-h200-sxm",
    "hardware/nvidia-b200",
    "hardware/amd-instinct-mi300x",
)
SHAPES = ((8, 1), (16, 2))  # (devices, nodes): one 8-device node, two of them
# Two nodes are joined by this link (a PP stage or a TP group that spans them crosses it;
# kb plan never assumes one, so the question names it, and the page says so).
INTER_LINK = "interconnects/infiniband-ndr"
BATCHES = (1, 8, 16, 32, 64, 128, 256)
LENGTHS = ((2048, 256),)  # (prompt tokens, output tokens)
ENGINES = ("engines/vllm",)
TABLE_BATCH = 64  # the worked tables' query (kb.sitegen.plan_tables)
TABLE_LENGTHS = (2048, 256)
NEAREST = 3  # receipt rows shown beside a prediction
INPUT_KINDS = ("accelerator", "interconnect", "engine", "flop_class", "receipt", "strategy")

# The figures the page shows, in order: the plan.v1 `values` keys and their labels.
FIGURES = (
    ("ttft", "TTFT (time to first token)"),
    ("tpot", "TPOT (decode step)"),
    ("latency", "Request latency"),
    ("tokens_per_s_system", "Output tokens/s, system"),
    ("tokens_per_s_per_device", "Output tokens/s per device"),
    ("exposed_share", "Exposed communication / step"),
    ("max_batch", "Largest batch at this context"),
    ("max_context", "Longest context at this batch"),
    ("energy_per_token", "Energy per token"),
)

Report = Callable[[KnowledgeBase, "Query"], Mapping[str, Any]]


@dataclass(frozen=True)
class Query:
    """One `kb plan` question the menus can form (every mapping of it is one option)."""

    model: str
    hardware: str
    count: int
    nodes: int
    batch: int
    input_tokens: int
    output_tokens: int
    engine: str | None
    inter_link: str | None = None  # between nodes (two-node shapes)

    def argv(self) -> list[str]:
        """The same question as `kb plan` arguments."""
        args = [self.model, "--on", self.hardware, "--count", str(self.count)]
        args += ["--nodes", str(self.nodes), "--batch", str(self.batch)]
        args += ["--context", f"{self.input_tokens}/{self.output_tokens}"]
        args += ["--engine", self.engine] if self.engine else []
        return args + (["--inter-link", self.inter_link] if self.inter_link else [])


def plan_report(kb: KnowledgeBase, query: Query) -> Mapping[str, Any]:
    """The plan.v1 report `kb plan --format json` prints for `query` (kb.plan, one evaluator).

    The same calls as the command (kb.commands.plan.run, kb.plan.render.document) on
    the site's knowledge base; kb's error for a query it cannot plan is a ValueError
    (kb.plan's PlanError, kb.ledger.scenario's ScenarioError).
    """
    from kb.plan.planner import Query as PlanQuery
    from kb.plan.planner import model_facts, plan
    from kb.plan.render import document

    asked = PlanQuery(
        model=query.model,
        hardware=query.hardware,
        count=query.count,
        nodes=query.nodes,
        batch=query.batch,
        input_tokens=query.input_tokens,
        output_tokens=query.output_tokens,
        engine=query.engine,
        inter_link=query.inter_link,
    )
    return document(plan(asked, model_facts(kb, asked, None), kb))


def planned_models(kb: KnowledgeBase) -> list[Record]:
    return sorted(kb.of_kind("model"), key=lambda r: r.id)


def planned_hardware(kb: KnowledgeBase) -> list[Record]:
    found = (kb.get(h) for h in COMMON_HARDWARE)
    return [r for r in found if r is not None and r.kind == "accelerator"]


def shape_key(count: int, nodes: int) -> str:
    return f"{count}|{nodes}"


def shape_label(count: int, nodes: int) -> str:
    return f"{count} devices, {nodes} node{'s' if nodes > 1 else ''}"


def degrees_key(degrees: Mapping[str, Any]) -> str:
    return ".".join(f"{d}{int(degrees.get(d, 1))}" for d in ("tp", "pp", "ep", "dp"))


def result_key(
    hardware: str, count: int, nodes: int, degrees: str, batch: int, lengths: str, engine: str
) -> str:
    """The lookup key explore.js forms from the controls (same order, same separators)."""
    return "|".join((hardware, str(count), str(nodes), degrees, str(batch), lengths, engine))


def lengths_key(input_tokens: int, output_tokens: int) -> str:
    return f"{input_tokens}/{output_tokens}"


def _inter(nodes: int) -> str | None:
    return INTER_LINK if nodes > 1 else None


def queries(model: str, hardware: Iterable[str]) -> list[Query]:
    """Every query of the menus for one model."""
    return [
        Query(model, hw, count, nodes, batch, prompt, output, engine, _inter(nodes))
        for hw in hardware
        for count, nodes in SHAPES
        for batch in BATCHES
        for prompt, output in LENGTHS
        for engine in ENGINES
    ]


# ---- one model's data ----------------------------------------------------------------------


class Strings:
    """Repeated strings of one data file, interned: each row names them by index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.items)
            self.items.append(text)
        return found


def shown(value: Mapping[str, Any] | None) -> list[str] | None:
    """[exact, text] of a plan.v1 `exact` value: the JSON's exact string and kb's text for it."""
    if value is None:
        return None
    exact = str(value["exact"])
    return [exact, quantity_text(Fraction(exact), str(value["unit"]))]


def fraction(value: Mapping[str, Any]) -> Fraction:
    """A plan.v1 `exact` value as a Fraction (its `exact` text, never its float)."""
    return Fraction(str(value["exact"]))


def quantity_text(value: Fraction, unit: str) -> str:
    """A value in base units as the site prints it (kb.numfmt, 4 significant digits)."""
    if unit == "1/s":
        return f"{numfmt.significant(value)} tok/s"
    if unit in ("", "1"):
        return numfmt.significant(value)
    return numfmt.human(value, unit)


def compact_option(option: Mapping[str, Any], strings: Strings) -> dict[str, Any]:
    """One plan.v1 option as the page reads it (exact values kept, strings interned)."""
    memory = option["memory"]
    values = option.get("values") or {}
    need = memory.get("need_per_device")
    have = memory.get("have_per_device")
    return {
        "status": option["status"],
        "fits": option["status"] == "feasible",
        "need": [need["exact"] if need else "", memory.get("need_gib") or "n/a"],
        "have": [have["exact"] if have else "", memory.get("have_gib") or "n/a"],
        "figures": {key: shown(values.get(key)) for key, _ in FIGURES},
        "rows": [
            [
                strings(str(row["name"])),
                row["value"]["exact"] if row.get("value") else "",
                shown(row.get("value"))[1] if row.get("value") else "n/a",  # type: ignore[index]
                strings(str(row["provenance"])),
                strings(str(row["formula"])),
                [strings(str(r)) for r in row.get("receipts", ())],
            ]
            for row in option.get("rows", ())
        ],
        "provenance": option.get("provenance", "none"),
        "problems": [strings(str(p)) for p in option.get("problems", ())],
        "pareto": list(option.get("pareto", ())),
        "slo": list(option.get("slo_violations", ())),
    }


def option_label(option: Mapping[str, Any]) -> str:
    """A degrees menu entry: the option's name, its devices and nodes."""
    nodes = int(option.get("nodes", 1))
    return f"{option['name']} ({option['devices']} devices, {nodes} node{'s' if nodes > 1 else ''})"


def model_data(
    kb: KnowledgeBase, model: Record, hardware: Sequence[str], report: Report = plan_report
) -> dict[str, Any]:
    """Every result of one model's menus, its degrees menus and its end-to-end receipt rows."""
    strings = Strings()
    results: dict[str, Any] = {}
    options: dict[str, list[list[str]]] = {}
    failures: dict[str, str] = {}
    for query in queries(model.id, hardware):
        lengths = lengths_key(query.input_tokens, query.output_tokens)
        menu = options.setdefault(f"{query.hardware}|{shape_key(query.count, query.nodes)}", [])
        try:
            found = report(kb, query)
        except ValueError as exc:  # kb's words for a query it cannot plan
            failures[f"{query.hardware}|{shape_key(query.count, query.nodes)}"] = str(exc)
            continue
        for option in found.get("options", ()):
            degrees = degrees_key(option["degrees"])
            if all(entry[0] != degrees for entry in menu):
                menu.append([degrees, option_label(option)])
            key = result_key(
                query.hardware,
                query.count,
                query.nodes,
                degrees,
                query.batch,
                lengths,
                query.engine or "",
            )
            results[key] = compact_option(option, strings)
    for menu in options.values():
        menu.sort(key=lambda entry: _degree_order(entry[0]))
    return {
        "model": model.id,
        "strings": strings.items,
        "options": options,
        "failures": failures,
        "results": results,
        "receipts": receipt_rows(kb, model.id),
    }


def _degree_order(key: str) -> tuple[int, ...]:
    """tp8.pp1.ep1.dp1 before tp4.pp2...: by descending tp, then pp, ep, dp."""
    numbers = [int(n) for n in re.findall(r"\d+", key)]
    return (-numbers[0], *numbers[1:])


def data_script(model: str, data: Mapping[str, Any]) -> str:
    """The model's data file: a script that adds it to window.KB_EXPLORE_DATA."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    payload = payload.replace("</", "<\\/")  # never closes a script element
    return (
        "window.KB_EXPLORE_DATA = window.KB_EXPLORE_DATA || {};\n"
        f"window.KB_EXPLORE_DATA[{json.dumps(model)}] = {payload};\n"
    )


# ---- the measured end-to-end receipts beside a prediction ----------------------------------

# A receipt row's metric -> the plan.v1 value it measures (first match wins); a metric
# none names (ratios, acceptance rates, per-node rates) has no figure to stand beside.
METRIC_FIGURES = (
    (re.compile(r"\bttft\b|first[- ]token", re.I), "ttft"),
    (
        re.compile(r"\btpot\b|per output token|inter-token|per-token latency|decode step", re.I),
        "tpot",
    ),
    (re.compile(r"batch latency|request latency|end-to-end", re.I), "latency"),
    (re.compile(r"per gpu", re.I), "tokens_per_s_per_device"),
    (
        re.compile(r"total output tokens per second|whole system|^throughput|out tok/s", re.I),
        "tokens_per_s_system",
    ),
)
FIGURE_UNITS = {
    "ttft": "s",
    "tpot": "s",
    "latency": "s",
    "tokens_per_s_per_device": "1/s",
    "tokens_per_s_system": "1/s",
}


def metric_figure(metric: str, unit: str) -> str | None:
    """The prediction a receipt row's metric compares with, if its unit agrees."""
    from kb.ledger.quantities import QuantityError, unit_scale

    for pattern, figure in METRIC_FIGURES:
        if pattern.search(metric):
            try:
                dim = unit_scale(unit)[1]
            except QuantityError:
                return None
            return figure if dim == FIGURE_UNITS[figure] else None
    return None


def receipt_rows(kb: KnowledgeBase, model: str) -> list[dict[str, Any]]:
    """The model's end-to-end receipt rows that measure a figure the plan predicts."""
    from kb.ledger.quantities import QuantityError, exact, unit_scale

    rows = []
    for record in sorted(kb.of_kind("receipt"), key=lambda r: r.id):
        data = record.data
        if data.get("pattern") != "end-to-end":
            continue
        hardware = [h for h in _list(data.get("hardware")) if isinstance(h, str)]
        for index, row in enumerate(_list(data.get("results"))):
            if not isinstance(row, Mapping) or (row.get("model") or data.get("model")) != model:
                continue
            value = row.get("value")
            if not isinstance(value, Mapping):
                continue
            unit = str(value.get("unit", ""))
            figure = metric_figure(str(row.get("metric", "")), unit)
            if figure is None:
                continue
            try:
                base = exact(value.get("value")) * unit_scale(unit)[0]
            except (QuantityError, TypeError, ValueError):
                continue
            rows.append(
                {
                    "receipt": record.id,
                    "row": index,
                    "hardware": hardware,
                    "gpus": _int(row.get("gpus")),
                    "batch": _int(row.get("batch", row.get("concurrency"))),
                    "input": _int(row.get("input_tokens")),
                    "output": _int(row.get("output_tokens")),
                    "metric": str(row.get("metric")),
                    "conditions": _conditions(row, hardware),
                    "figure": figure,
                    "exact": str(base),
                    "shown": quantity_text(base, FIGURE_UNITS[figure]),
                }
            )
    return rows


def _conditions(row: Mapping[str, Any], hardware: list[str]) -> str:
    parts = [", ".join(h.removeprefix("hardware/") for h in hardware)]
    for field, label in (
        ("gpus", "GPUs"),
        ("tp", "TP"),
        ("pp", "PP"),
        ("ep", "EP"),
        ("batch", "batch"),
        ("concurrency", "concurrency"),
        ("precision", ""),
    ):
        if row.get(field) is not None:
            parts.append(f"{label} {row[field]}".strip())
    if row.get("input_tokens") is not None and row.get("output_tokens") is not None:
        parts.append(f"{row['input_tokens']}/{row['output_tokens']} tokens")
    named = row.get("label")
    return "; ".join(p for p in parts if p) + (f" ({named})" if named else "")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def plan_link(record: Record) -> dict[str, str] | None:
    """The worked tables a model's or a common accelerator's record page links to."""
    from kb.sitegen import urls

    if record.kind == "model":
        return {"url": urls.plan_model(record.id), "text": "this model on every common node"}
    if record.kind == "accelerator" and record.id in COMMON_HARDWARE:
        return {"url": urls.plan_hardware(record.id), "text": "every model on nodes of it"}
    return None


# ---- the page ------------------------------------------------------------------------------


def menus(kb: KnowledgeBase, files: Mapping[str, str]) -> dict[str, Any]:
    """The controls' menus and the data file of each model (the page's JSON block)."""
    return {
        "models": [[m.id, m.title or m.id] for m in planned_models(kb) if m.id in files],
        "hardware": [[h.id, h.title or h.id] for h in planned_hardware(kb)],
        "shapes": [[shape_key(c, n), shape_label(c, n)] for c, n in SHAPES],
        "batches": list(BATCHES),
        "batch": TABLE_BATCH,
        "lengths": [[lengths_key(i, o), f"{i} / {o}"] for i, o in LENGTHS],
        "engines": [[e, _engine_title(kb, e)] for e in ENGINES],
        "files": dict(files),
        "figures": [list(f) for f in FIGURES],
        "nearest": NEAREST,
    }


def _engine_title(kb: KnowledgeBase, engine: str) -> str:
    record = kb.get(engine)
    return (record.title or engine) if record is not None else engine


def summary(kb: KnowledgeBase) -> str:
    """What the menus cover, in words (the page says it under its heading)."""
    hw = len(planned_hardware(kb))
    count = len(planned_models(kb)) * hw * len(SHAPES) * len(BATCHES) * len(LENGTHS)
    return (
        f"The menus cover {len(planned_models(kb))} models on {hw} accelerators as "
        f"{' or '.join(shape_label(c, n) for c, n in SHAPES)}, batches "
        f"{', '.join(map(str, BATCHES))}, lengths "
        f"{', '.join(f'{i}/{o}' for i, o in LENGTHS)} and "
        f"{len(ENGINES)} engine{'s' if len(ENGINES) > 1 else ''}: {count * len(ENGINES)} "
        "questions to kb plan, each pricing every mapping of its devices."
    )
