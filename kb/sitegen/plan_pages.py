"""The planner on the site: the placement explorer and the worked tables (issue 36 items 3, 4).

For each model, one pass asks kb.plan every question of the explorer's menus
(kb.sitegen.explorer) and writes the model's explorer data file, its worked tables
(one page per common node: the planner's table for TABLE_BATCH sequences at
TABLE_LENGTHS, the answer first) and its index of them. The pass is skipped, and
last build's files kept, while the model's key holds: the model record and every
record of the kinds a price reads (explorer.INPUT_KINDS). The explorer page, the
index of every table and each accelerator's index show only ids and titles.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kb.gcpause import paused_during
from kb.ledger.kept import end_to_end_rows
from kb.ledger.scenario import ScenarioError
from kb.model import KnowledgeBase, Record
from kb.plan.enumerate import PlanError
from kb.sitegen import explorer, urls
from kb.sitegen.explorer import Query
from kb.workers import map_forked

if TYPE_CHECKING:
    from kb.sitegen.site import Site

# The worked table's columns: plan.v1 value keys and their headings.
TABLE_FIGURES = (
    ("ttft", "TTFT"),
    ("tpot", "TPOT"),
    ("tokens_per_s_system", "tok/s, system"),
    ("tokens_per_s_per_device", "tok/s per device"),
    ("max_batch", "max batch"),
    ("max_context", "max context"),
    ("exposed_share", "exposed comm / step"),
)
# The answer at the top: the best feasible option on each of these (plan.v1 dimensions).
ANSWER = (("tpot", "lower"), ("tokens_per_s_per_device", "higher"), ("ttft", "lower"))


def write_plan_pages(site: Site) -> None:
    """Every model's explorer data, worked tables and index; the explorer; the indexes.

    Nothing when the build was not asked for the planner (`site.plans` None).
    """
    menus = site.plans
    if menus is None:
        return
    kb = site.kb
    models, hardware = explorer.planned_models(kb, menus), explorer.planned_hardware(kb, menus)
    hw_ids = [h.id for h in hardware]
    todo = [m for m in models if not _kept(site, m, hw_ids, menus)]
    store = PassStore(kb)
    found = {m.id: store.get(m.id, _key(site, m)) for m in todo}
    missing = sorted((m for m in todo if found[m.id] is None), key=_costliest_first)
    if missing and len(missing) == len(kb.of_kind("model")):
        end_to_end_rows(kb)  # every model's receipt rows: read or priced once, before the fork
    passes = map_forked(lambda m: model_pass(kb, m, hw_ids, menus), missing, 2, 1)
    if passes is None:  # one core, one model, or no fork: here, one model at a time
        passes = [model_pass(kb, m, hw_ids, menus) for m in missing]
    for model, done in zip(missing, passes, strict=True):
        found[model.id] = done
        store.put(model.id, _key(site, model), done)
    store.save()
    for model in todo:
        done = found[model.id]
        assert done is not None  # kept in the store, or priced above
        write_model(site, model, hardware, menus, done)
    files = {m.id: urls.explore_data(m.id) for m in models}
    titles = [r.id for r in (*models, *hardware)]
    missing = explorer.left_out(kb, menus)
    key = site.inputs.key("plans", urls.PLANS, (), [*titles, *(m.id for m in missing)])
    if not site.reuse(urls.PLANS, key):
        rows = _index_rows(models, hardware, menus)
        note = explorer.left_out_text(kb, menus)
        site.page("plans_index.html", urls.PLANS, rows=rows, left_out=missing, left_out_text=note)
    for hw in hardware:
        page = urls.plan_hardware(hw.id)
        if not site.reuse(page, site.inputs.key("plans", page, (), titles)):
            rows = _index_rows(models, [hw], menus)
            site.page("plans_hardware.html", page, hardware=hw, rows=rows)
    site.page(
        "explore.html",
        urls.EXPLORE,
        menus=explorer.menus_data(kb, menus, files),
        summary=explorer.summary(kb, menus),
        inter_link=menus.inter_link,
        tables_url=urls.PLANS,
    )


def _costliest_first(model: Record) -> tuple[bool, str]:
    """The pool's order: MoE models first (their EP mappings make a pass 3-6x a dense one's).

    Each model is one task (kb.workers.map_forked, one item per task), taken by the next
    free worker: the long passes start first, the short ones fill in at the end, so the
    workers finish together (largest first). The files and the store do not depend on it.
    """
    return (model.get("architecture") != "moe", model.id)


def planned_ids(kb: KnowledgeBase, menus: explorer.Menus) -> frozenset[str]:
    """The models and accelerators whose record pages link their worked tables."""
    found = [*explorer.planned_models(kb, menus), *explorer.planned_hardware(kb, menus)]
    return frozenset(r.id for r in found)


def menus_salt(kb: KnowledgeBase, menus: explorer.Menus) -> str:
    """The menus' part of the build's salt: their identity, and their models if any is left out.

    Which models the menus hold then depends on every record that names a model
    (explorer.chosen_models), while a model's page, which links its tables only when the
    model is planned, reads only its own inputs: a change of the chosen models is a new
    salt, so every page is rendered again. When no model is left out, a model's page
    depends only on the model itself, and the salt is the menus' identity alone.
    """
    if not explorer.left_out(kb, menus):
        return menus.identity()
    chosen = ",".join(m.id for m in explorer.planned_models(kb, menus))
    return f"{menus.identity()}:{hashlib.sha256(chosen.encode()).hexdigest()[:16]}"


def _index_rows(
    models: Sequence[Record], hardware: Sequence[Record], menus: explorer.Menus
) -> list[dict[str, Any]]:
    return [
        {
            "model": m,
            "index": urls.plan_model(m.id),
            "cells": [
                {
                    "text": f"{h.title or h.id}, {explorer.shape_label(c, n)}",
                    "shape": explorer.shape_label(c, n),
                    "url": urls.plan_table(m.id, h.id, c, n),
                }
                for h in hardware
                for c, n in menus.shapes
            ],
        }
        for m in models
    ]


def model_pages(model: str, hardware: Sequence[str], menus: explorer.Menus) -> list[str]:
    """The files one model's pass writes."""
    tables = [urls.plan_table(model, h, c, n) for h in hardware for c, n in menus.shapes]
    return [urls.explore_data(model), urls.plan_model(model), *tables]


def _key(site: Site, model: Record) -> str:
    return site.inputs.key("plans", model.id, {model.id}, (), explorer.INPUT_KINDS)


def _kept(site: Site, model: Record, hardware: Sequence[str], menus: explorer.Menus) -> bool:
    """Keep the model's files when its key holds (all of them, or none: one pass makes them)."""
    key, pages = _key(site, model), model_pages(model.id, hardware, menus)
    published, previous = site.writer.published, site.previous.pages
    if not all(previous.get(p) == key and p in published for p in pages):
        return False
    for page in pages:
        site.reuse(page, key)
    return True


@dataclass(frozen=True)
class Pass:
    """What one model's pass computed (plain data: a worker returns it)."""

    script: str  # the explorer's data file
    tables: dict[tuple[str, int, int], Mapping[str, Any] | str]  # report, or kb's error


class PassStore:
    """The model passes kept between runs: a view of kb's one store (kb.store), `plans-<x>.kbstore`.

    A pass is the costly part of the planner's pages (kb plan over every question of
    the menus: ~48 s of CPU for the shipped tree). It is kept in its model's slot
    under the model's page key (`_key`: the build fingerprint, which covers kb's code,
    the templates and the menus, and the stamps of the model record and of every
    record of the kinds a price reads), the same key that keeps the model's files in
    an output folder; so a build into a new folder, or after an edit that no price
    reads, asks kb plan nothing while that key holds. One slot per model: a new pass
    replaces the old. The store's salt is kb.fingerprint's; a damaged entry is a miss
    (the store checks every entry) and the pass is computed again.
    """

    NAME = "plans"

    def __init__(self, kb: KnowledgeBase) -> None:
        from kb import fingerprint
        from kb.store import ShardedStore, cache_dir

        self.store = ShardedStore(cache_dir(kb.root), self.NAME, fingerprint.salt(), shards=4)
        self.changed = False

    def get(self, model: str, key: str) -> Pass | None:
        """The model's pass kept under `key`, or None."""
        found = self.store.get(_slot(model))
        if not isinstance(found, tuple) or len(found) != 3 or found[0] != key:
            return None
        _, script, tables = found
        try:
            rows = json.loads(tables)
            return Pass(script, {(str(h), int(c), int(n)): v for h, c, n, v in rows})
        except (TypeError, ValueError):
            return None

    def put(self, model: str, key: str, done: Pass) -> None:
        rows = [[h, c, n, v] for (h, c, n), v in sorted(done.tables.items())]
        self.store.put(_slot(model), (key, done.script, json.dumps(rows, sort_keys=True)))
        self.changed = True

    def save(self) -> None:
        """Write the shards that changed (a store that cannot be written keeps nothing)."""
        if self.changed:
            self.store.save()


def _slot(model: str) -> str:
    return f"{model}\0pass"


@paused_during
def model_pass(
    kb: KnowledgeBase, model: Record, hardware: Sequence[str], menus: explorer.Menus
) -> Pass:
    """Ask kb.plan every question of the menus for one model; keep the worked tables' reports.

    The cyclic collector is paused for the pass (kb.gcpause): a pass makes almost no
    cyclic garbage (about 100 objects a model), but its full collections walked every
    object the build made before it, about 15% of the pass's CPU.
    """
    tables: dict[tuple[str, int, int], Mapping[str, Any] | str] = {}
    cache: dict[Any, Any] = {}

    def report(kb: KnowledgeBase, query: Query) -> Mapping[str, Any]:
        where = (query.hardware, query.count, query.nodes)
        try:
            found = explorer.plan_report(kb, query, cache)
        except (PlanError, ScenarioError) as exc:
            if menus.is_table(query):
                tables[where] = str(exc)
            raise
        if menus.is_table(query):
            tables[where] = found
        return found

    data = explorer.model_data(kb, model, hardware, menus, report)
    return Pass(explorer.data_script(model.id, data), tables)


def write_model(
    site: Site, model: Record, hardware: Sequence[Record], menus: explorer.Menus, done: Pass
) -> None:
    """Write one model's data file, worked tables and index from its pass."""
    key = _key(site, model)
    for page in model_pages(model.id, [h.id for h in hardware], menus):
        site.manifest.pages[page] = key
    site.text(urls.explore_data(model.id), done.script)
    entries = []
    for hw in hardware:
        for count, nodes in menus.shapes:
            table = worked_table(done.tables.get((hw.id, count, nodes), "not asked"))
            page = urls.plan_table(model.id, hw.id, count, nodes)
            query = menus.table_query(model.id, hw.id, count, nodes)
            site.page(
                "plan_table.html",
                page,
                model=model,
                hardware=hw,
                shape=explorer.shape_label(count, nodes),
                table=table,
                command="kb plan " + " ".join(query.argv()),
                explore=_explore_hash(query),
                batch=query.batch,
                lengths=explorer.lengths_key(query.input_tokens, query.output_tokens),
            )
            shape = explorer.shape_label(count, nodes)
            entries.append({"url": page, "hardware": hw, "shape": shape, "answer": table["answer"]})
    site.page("plans_model.html", urls.plan_model(model.id), model=model, entries=entries)


def _explore_hash(query: Query) -> str:
    """The explorer's link to this question (its controls read the hash, decoding each value).

    Each value percent-encoded but for `/`: a `|` (the node shape's `8|1`) is not allowed
    in a URL's fragment (the HTML validator refuses the href).
    """
    parts = {
        "model": query.model,
        "hardware": query.hardware,
        "shape": explorer.shape_key(query.count, query.nodes),
        "batch": str(query.batch),
        "lengths": explorer.lengths_key(query.input_tokens, query.output_tokens),
        "engine": query.engine or "",
    }
    return "#" + "&".join(f"{k}={quote(v, safe='/')}" for k, v in parts.items())


def worked_table(found: Mapping[str, Any] | str) -> dict[str, Any]:
    """The planner's table of one report, the answer first (a reason when kb could not plan)."""
    if isinstance(found, str):
        return {"answer": f"Not planned: {found}", "answers": [], "options": [], "notes": []}
    options = list(found.get("options", ()))
    feasible = [o for o in options if o["status"] == "feasible"]
    rows = [_table_row(o) for o in options]
    answers = []
    for key, better in ANSWER:
        best = _best(feasible, key, better)
        if best is not None:
            value = explorer.shown(best["values"][key])
            label = dict(TABLE_FIGURES)[key]
            answers.append({"dimension": label, "option": best["name"], "value": value})
    if feasible:
        answer = f"{len(feasible)} of {len(options)} mappings fit."
    elif options:
        sized = [o for o in options if o["memory"].get("need_per_device")]
        least = min(sized, key=lambda o: _need(o), default=None)
        answer = "No mapping fits." + (
            f" The smallest state needs {least['memory']['need_gib']} per device "
            f"({least['name']}); a device has {least['memory']['have_gib']}."
            if least is not None
            else ""
        )
    else:
        answer = "kb plan enumerated no mapping."
    notes = [str(n) for n in found.get("notes", ())]
    unavailable = [
        f"{d['label']}: {d['reason']}"
        for d in found.get("dimensions", ())
        if not d.get("available") and d.get("reason")
    ]
    return {
        "answer": answer,
        "answers": answers,
        "options": rows,
        "notes": notes + unavailable,
        "heads": [label for _, label in TABLE_FIGURES],
    }


def _need(option: Mapping[str, Any]) -> Any:
    return explorer.fraction(option["memory"]["need_per_device"])


def _best(options: Sequence[Mapping[str, Any]], key: str, better: str) -> Mapping[str, Any] | None:
    priced = [o for o in options if (o.get("values") or {}).get(key) is not None]
    if not priced:
        return None
    pick = min if better == "lower" else max
    return pick(priced, key=lambda o: explorer.fraction(o["values"][key]))


def _table_row(option: Mapping[str, Any]) -> dict[str, Any]:
    memory, values = option["memory"], option.get("values") or {}
    return {
        "name": option["name"],
        "status": option["status"],
        "devices": option["devices"],
        "nodes": option["nodes"],
        "need": memory.get("need_gib") or "n/a",
        "have": memory.get("have_gib") or "n/a",
        "cells": [explorer.shown(values.get(key)) for key, _ in TABLE_FIGURES],
        "pareto": len(option.get("pareto", ())),
        "provenance": option.get("provenance", "none"),
        "problems": list(option.get("problems", ())),
        "slo": list(option.get("slo_violations", ())),
    }
