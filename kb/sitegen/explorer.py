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

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb import numfmt
from kb.ledger.scenario import ScenarioError
from kb.model import KnowledgeBase, Record
from kb.plan.enumerate import PlanError

COMMON_HARDWARE = (  # the common nodes (issue 36 item 4): eight accelerators per node
    "hardware/nvidia-h100-sxm",
    "hardware/nvidia-h200-sxm",
    "hardware/nvidia-b200",
    "hardware/amd-instinct-mi300x",
)
INPUT_KINDS = ("accelerator", "interconnect", "engine", "flop_class", "receipt", "strategy")
NEAREST = 3  # receipt rows shown beside a prediction
# The default menus' models: at most this many, those the most records name (`chosen_models`).
# A model's pass costs about 1-4.5 CPU-s cold (about 2 on average: 35-43 CPU-s for the
# shipped tree's 18 models), so 24 bounds a cold build's pricing to about a minute of CPU
# whatever the tree (bench/make_corpus.py's 10,000 records have 500 models); the shipped
# tree's 18 are all in it. The site names the models left out (`left_out`), and `kb plan`
# answers any model on any hardware.
MODEL_LIMIT = 24


@dataclass(frozen=True)
class Menus:
    """What the explorer's controls offer; every combination is one question to kb plan.

    `models` None: the models of the knowledge base, at most `model_limit` of them, the
    most named first (`chosen_models`; None: every model). `table_batch` (one of `batches`)
    and the first lengths and engine are the worked tables' question. Two nodes are
    joined by `inter_link` (kb plan never assumes one; the page names it).
    """

    models: tuple[str, ...] | None = None
    hardware: tuple[str, ...] = COMMON_HARDWARE
    shapes: tuple[tuple[int, int], ...] = ((8, 1), (16, 2))  # (devices, nodes)
    batches: tuple[int, ...] = (1, 8, 64, 256)
    lengths: tuple[tuple[int, int], ...] = ((2048, 256),)  # (prompt, output tokens)
    engines: tuple[str, ...] = ("engines/vllm",)
    inter_link: str = "interconnects/infiniband-ndr"
    table_batch: int = 64
    model_limit: int | None = MODEL_LIMIT

    def identity(self) -> str:
        """The menus as text: a different menu is a different site (kb.sitegen.build's salt)."""
        return repr(self)

    def table_query(self, model: str, hardware: str, count: int, nodes: int) -> Query:
        prompt, output = self.lengths[0]
        inter = self.inter_link if nodes > 1 else None
        engine = self.engines[0]
        return Query(model, hardware, count, nodes, self.table_batch, prompt, output, engine, inter)

    def is_table(self, query: Query) -> bool:
        return query == self.table_query(query.model, query.hardware, query.count, query.nodes)


# `kb build`'s menus (the default; `--no-plans` builds without them). Each question
# prices every mapping of its devices through the composed ledger: with the run's memos
# (equation systems, evaluations and each mapping's batch-free parts: kb.equations.evalmemo,
# kb.ledger.fixed; composed records, receipt scans; a Max of the EP tail ordered by
# kb.equations.minmax; each symbol's binding, kb.equations.evaluate) and the cyclic
# collector paused for a pass (kb.sitegen.plan_pages.model_pass) a dense model's pass
# over its 32 questions takes about 0.7-1.5 s of CPU, an MoE model's 1.8-4.4 s (its EP
# mappings), 34.9 s for the shipped tree's 18 models (session 19, one process, load
# 2.7; run side by side with session 18's code at load 7, 42.9 s against 50.7 s); so
# the batches are four, not the seven of a finer menu: bench/explorer.py --cost --full
# --no-browser prints each model's pass.
DEFAULT_MENUS = Menus()

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


def plan_report(
    kb: KnowledgeBase, query: Query, cache: dict[Any, Any] | None = None
) -> Mapping[str, Any]:
    """The plan.v1 report `kb plan --format json` prints for `query` (kb.plan, one evaluator).

    The same calls as the command (kb.commands.plan.run, kb.plan.render.document) on
    the site's knowledge base; kb's error for a query it cannot plan is kb.plan's
    PlanError or kb.ledger.scenario's ScenarioError (any other error is a fault in kb,
    never a menu entry "not planned": the 4,300-digit ValueError once hid answers so).
    `cache` keeps each scenario's outcome across the questions of one pass: the same
    mapping asked again (eight devices of a sixteen-device question, one node's) is
    priced once, by the same evaluator, so its figures are the ones `kb plan` prints either way.
    """
    from kb.plan.planner import Query as PlanQuery
    from kb.plan.planner import default_price, model_facts, plan
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
    known = cache if cache is not None else {}

    def price(scenarios: Sequence[Mapping[str, Any]], kb: Any) -> list[Any]:
        keys = [tuple(sorted(s.items())) for s in scenarios]
        missing = {k: s for k, s in zip(keys, scenarios, strict=True) if k not in known}
        if missing:
            found = default_price(list(missing.values()), kb)
            known.update(zip(missing, found, strict=True))
        return [known[k] for k in keys]

    return document(plan(asked, model_facts(kb, asked, None), kb, price))


def planned_models(kb: KnowledgeBase, menus: Menus) -> list[Record]:
    """The models the menus offer, in their order (by id when the menus name none)."""
    if menus.models is None:
        chosen = chosen_models(kb, kb.of_kind("model"), menus.model_limit)
        return sorted(chosen, key=lambda r: r.id)
    found = (kb.get(m) for m in menus.models)
    return [r for r in found if r is not None and r.kind == "model"]


def chosen_models(kb: KnowledgeBase, models: Sequence[Record], limit: int | None) -> list[Record]:
    """At most `limit` of `models`: those the most records reference directly, then by id.

    The models a reader comes to the explorer for are the ones the knowledge base has
    evidence about: the receipts, placements, proposals and flop classes that name them.
    """
    if limit is None or len(models) <= limit:
        return list(models)
    from kb.reads import graph_of

    graph = graph_of(kb)
    ranked = sorted(models, key=lambda r: (-len(graph.referrers(r.id)), r.id))
    return ranked[:limit]


def left_out(kb: KnowledgeBase, menus: Menus) -> list[Record]:
    """The models of the knowledge base that the menus do not offer, by id."""
    planned = {r.id for r in planned_models(kb, menus)}
    return sorted((r for r in kb.of_kind("model") if r.id not in planned), key=lambda r: r.id)


def left_out_text(kb: KnowledgeBase, menus: Menus) -> str:
    """What the site says of the models it did not price ("" when it priced every one)."""
    missing = left_out(kb, menus)
    if not missing:
        return ""
    limit = menus.model_limit
    rule = (
        f"the {limit} model{'s' if limit != 1 else ''} that the most records name"
        if menus.models is None and limit is not None
        else "the models the build was given"
    )
    return (
        f"The menus hold {rule}: {len(missing)} more "
        f"model{'s' if len(missing) > 1 else ''} of this knowledge base "
        f"{'are' if len(missing) > 1 else 'is'} not priced here (listed on the planner's "
        "tables page); kb plan MODEL --on ACCELERATOR answers any of them."
    )


def planned_hardware(kb: KnowledgeBase, menus: Menus) -> list[Record]:
    found = (kb.get(h) for h in menus.hardware)
    return [r for r in found if r is not None and r.kind == "accelerator"]


def shape_key(count: int, nodes: int) -> str:
    return f"{count}|{nodes}"


def shape_label(count: int, nodes: int) -> str:
    return f"{count} devices, {nodes} node{'s' if nodes > 1 else ''}"


def result_key(
    hardware: str, count: int, nodes: int, option: str, batch: int, lengths: str, engine: str
) -> str:
    """The lookup key explore.js forms from the controls (same order, same separators).

    `option` is the mapping's name in kb plan's report (`tp8-pp2`, `dp2-tp4-1node`).
    """
    return "|".join((hardware, str(count), str(nodes), option, str(batch), lengths, engine))


def lengths_key(input_tokens: int, output_tokens: int) -> str:
    return f"{input_tokens}/{output_tokens}"


def queries(model: str, hardware: Iterable[str], menus: Menus) -> list[Query]:
    """Every query of the menus for one model."""
    return [
        Query(model, hw, count, nodes, batch, prompt, output, engine, inter)
        for hw in hardware
        for count, nodes in menus.shapes
        for inter in [menus.inter_link if nodes > 1 else None]
        for batch in menus.batches
        for prompt, output in menus.lengths
        for engine in menus.engines
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
    return [exact, _text(exact, str(value["unit"]))]


@functools.lru_cache(maxsize=8192)
def _text(exact: str, unit: str) -> str:
    """quantity_text of an exact string, kept: a pass shows the same rows at every batch."""
    return quantity_text(Fraction(exact), unit)


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
    """One plan.v1 option as the page reads it (exact values kept, strings interned).

    `fits`: whether the state fits a device (null when kb could not tell);
    `figures` lists [exact, text] (or null) in FIGURES order; a ledger row is
    [name, exact, text, provenance, formula, [receipt ids]], strings by index.
    """
    memory = option["memory"]
    values = option.get("values") or {}
    need = memory.get("need_per_device")
    have = memory.get("have_per_device")
    return {
        "status": option["status"],
        "fits": None if need is None or have is None else fraction(need) <= fraction(have),
        "need": [need["exact"] if need else "", memory.get("need_gib") or "n/a"],
        "have": [have["exact"] if have else "", memory.get("have_gib") or "n/a"],
        "figures": [shown(values.get(key)) for key, _ in FIGURES],  # in FIGURES order
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
    kb: KnowledgeBase,
    model: Record,
    hardware: Sequence[str],
    menus: Menus,
    report: Report,
) -> dict[str, Any]:
    """Every result of one model's menus, its degrees menus and its end-to-end receipt rows."""
    strings = Strings()
    results: dict[str, Any] = {}
    options: dict[str, list[list[Any]]] = {}
    failures: dict[str, str] = {}
    for query in queries(model.id, hardware, menus):
        lengths = lengths_key(query.input_tokens, query.output_tokens)
        menu = options.setdefault(f"{query.hardware}|{shape_key(query.count, query.nodes)}", [])
        try:
            found = report(kb, query)
        except (PlanError, ScenarioError) as exc:  # kb's words for a query it cannot plan
            failures[f"{query.hardware}|{shape_key(query.count, query.nodes)}"] = str(exc)
            continue
        for option in found.get("options", ()):
            name = str(option["name"])  # unique in a report (`-1node`: fewer nodes)
            if all(entry[0] != name for entry in menu):
                menu.append([name, option_label(option), dict(option["degrees"])])
            key = result_key(
                query.hardware,
                query.count,
                query.nodes,
                name,
                query.batch,
                lengths,
                query.engine or "",
            )
            results[key] = compact_option(option, strings)
    for menu in options.values():
        menu.sort(key=lambda entry: _degree_order(entry[2]))
    return {
        "model": model.id,
        "strings": strings.items,
        "options": options,
        "failures": failures,
        "results": results,
        "receipts": receipt_rows(kb, model.id),
    }


def _degree_order(degrees: Mapping[str, int]) -> tuple[int, ...]:
    """Devices used first (most), then descending tp, then pp, ep, dp."""
    tp, pp, ep, dp = (int(degrees.get(d, 1)) for d in ("tp", "pp", "ep", "dp"))
    return (-(tp * pp * ep * dp), -tp, pp, ep, dp)


def data_script(model: str, data: Mapping[str, Any]) -> str:
    """The model's data file: a script that adds it to window.KB_EXPLORE_DATA."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    payload = payload.replace("</", "<\\/")  # never closes a script element
    return (
        "window.KB_EXPLORE_DATA = window.KB_EXPLORE_DATA || {};\n"
        f"window.KB_EXPLORE_DATA[{json.dumps(model)}] = {payload};\n"
    )


# ---- the measured end-to-end receipts beside a prediction ----------------------------------

# What an end-to-end receipt row measures (kb.ledger.endtoend's `measures`) -> the plan.v1
# value of the chosen configuration it stands beside (a per-sequence decode rate has none).
MEASURES = {
    "ttft": "ttft",
    "tpot": "tpot",
    "request_latency": "latency",
    "output_tokens_per_s": "tokens_per_s_system",
    "output_tokens_per_s_per_gpu": "tokens_per_s_per_device",
}


def receipt_rows(kb: KnowledgeBase, model: str) -> list[dict[str, Any]]:
    """The model's end-to-end receipt rows, each held to its own prediction by kb.ledger.endtoend.

    Every row the end-to-end validation evaluates (`kb list --end-to-end`): its
    conditions, the measured value, kb's prediction at the row's own conditions, the
    error and the state (validated, contradicted, not evaluable with the reason,
    calibration), and which figure of the explorer's configuration it compares with.
    The rows are `kb list --end-to-end`'s when this run has them (kb.ledger.kept: a build
    that prices every model's pass reads or prices them all once, kb.sitegen.plan_pages),
    else the model's own rows priced as `evaluate_all` prices each (a row fitted to an
    engine's rate is a calibration row); tests/site/test_explorer.py holds the two equal.
    """
    from kb.ledger.endtoend import (
        calibration_receipts,
        end_to_end_receipts,
        evaluate_row,
        moe_expert_rates,
        report_row,
    )
    from kb.ledger.kept import in_run

    kept = in_run(kb)
    priced = None if kept is None else {(r.receipt, r.index): r for r in kept}
    calibration = calibration_receipts(kb) if priced is None else frozenset()
    fitted = moe_expert_rates()[1]
    rows = []
    for record in end_to_end_receipts(kb):
        hardware = [h for h in _list(record.get("hardware")) if isinstance(h, str)]
        for index, row in enumerate(_list(record.get("results"))):
            if not isinstance(row, Mapping) or (row.get("model") or record.get("model")) != model:
                continue
            if priced is not None:
                result = priced[(record.id, index)]
            else:
                calibrates = record.id in calibration or f"{record.id}#results.{index}" in fitted
                result = evaluate_row(kb, record, index, row, calibrates)
            shown = report_row(result)
            named = row.get("hardware")
            rows.append(
                {
                    "receipt": record.id,
                    "row": index,
                    "hardware": [named] if isinstance(named, str) else hardware,
                    "gpus": _int(row.get("gpus")),
                    "batch": _int(row.get("batch", row.get("concurrency"))),
                    "input": _int(row.get("input_tokens")),
                    "output": _int(row.get("output_tokens")),
                    "metric": result.metric,
                    "conditions": shown["conditions"] or _conditions(row, hardware),
                    "figure": MEASURES.get(result.measures or ""),
                    "measured": shown["measured"] or _authored(row),
                    "predicted": shown["predicted"],
                    "error": shown["error"],
                    "state": result.state,
                    "reason": result.reason,
                }
            )
    return rows


def _authored(row: Mapping[str, Any]) -> str:
    """A row's value as its receipt states it (a row kb does not evaluate)."""
    value = row.get("value")
    if isinstance(value, Mapping):
        return f"{value.get('value')} {value.get('unit', '')}".strip()
    return str(value)


def _conditions(row: Mapping[str, Any], hardware: list[str]) -> str:
    parts = [", ".join(h.removeprefix("hardware/") for h in hardware)]
    for field, label in (
        ("gpus", "GPUs"),
        ("tp", "TP"),
        ("pp", "PP"),
        ("ep", "EP"),
        ("dp", "DP"),
        ("moe_tp", "MoE TP"),
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
    """The worked tables a model's or an accelerator's page links to, when the site has them.

    The page shows the link only when the build planned that record (the common
    context's `planned` ids, kb.sitegen.build; the menus are part of every page's key).
    """
    from kb.sitegen import urls

    if record.kind == "model":
        return {"url": urls.plan_model(record.id), "text": "this model on every common node"}
    if record.kind == "accelerator":
        return {"url": urls.plan_hardware(record.id), "text": "every model on nodes of it"}
    return None


# ---- the page ------------------------------------------------------------------------------


def menus_data(kb: KnowledgeBase, menus: Menus, files: Mapping[str, str]) -> dict[str, Any]:
    """The controls' menus and the data file of each model (the page's JSON block)."""
    return {
        "models": [[m.id, m.title or m.id] for m in planned_models(kb, menus) if m.id in files],
        "hardware": [[h.id, h.title or h.id] for h in planned_hardware(kb, menus)],
        "shapes": [[shape_key(c, n), shape_label(c, n)] for c, n in menus.shapes],
        "batches": list(menus.batches),
        "batch": menus.table_batch,
        "lengths": [[lengths_key(i, o), f"{i} / {o}"] for i, o in menus.lengths],
        "engines": [[e, _engine_title(kb, e)] for e in menus.engines],
        "files": dict(files),
        "figures": [list(f) for f in FIGURES],
        "nearest": NEAREST,
    }


def _engine_title(kb: KnowledgeBase, engine: str) -> str:
    record = kb.get(engine)
    return (record.title or engine) if record is not None else engine


def summary(kb: KnowledgeBase, menus: Menus) -> str:
    """What the menus cover, in words (the page says it under its heading)."""
    models, hw = len(planned_models(kb, menus)), len(planned_hardware(kb, menus))
    count = models * hw * len(menus.shapes) * len(menus.batches) * len(menus.lengths)
    count *= len(menus.engines)
    omitted = left_out_text(kb, menus)
    return (
        f"The menus cover {models} models on {hw} accelerators as "
        f"{' or '.join(shape_label(c, n) for c, n in menus.shapes)}, batches "
        f"{', '.join(map(str, menus.batches))}, prompt/output lengths "
        f"{', '.join(f'{i}/{o}' for i, o in menus.lengths)} and "
        f"{len(menus.engines)} engine{'s' if len(menus.engines) > 1 else ''}: {count} "
        "questions to kb plan, each pricing every mapping of its devices."
    ) + (f" {omitted}" if omitted else "")
