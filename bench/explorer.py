"""The placement explorer's recompute time after a change, at desktop and phone width.

    python bench/explorer.py                 # build a small menus' site, then time it
    python bench/explorer.py --site _site    # a site built by `kb build` (plans by default)
    python bench/explorer.py --cost          # also: CPU and bytes of kb plan's pass per model
    python bench/explorer.py --cost --full --no-browser   # kb build's menus, no chromium

A change is one control set to another value (model, accelerator, node shape,
mapping, batch): the script sets it through window.kbExplore.set (the code path of
the controls' change event), which looks the result up and renders it, then forces
layout (reading the page's height); the time from the set to the end of layout is
one recompute, measured in the page with performance.now(). Printed, never asserted
(the machine is shared: compare medians, and read the load average printed beside
them). `--cost` prices each model's menus in this process (KB_JOBS=1) and prints the
CPU seconds (time.process_time) and the bytes of its data file, then what keeping
the passes in kb's store costs (kb.sitegen.plan_pages.PassStore: a build whose
passes are kept reads them instead of pricing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

WIDTHS = {"desktop": 1280, "phone": 390}
CHANGES = 60  # per width


def _small_menus() -> Any:
    """Small menus: a site of seconds to time the page on (`kb build`'s: --site, --full).

    Two models (one fits, DeepSeek-V3 in bf16 does not), one accelerator, two batches.
    """
    from kb.sitegen.explorer import Menus

    return Menus(
        models=("models/llama-3.1-70b", "models/deepseek-v3"),
        hardware=("hardware/nvidia-h100-sxm",),
        batches=(1, 64),
    )


MENUS_JSON = "JSON.parse(document.getElementById('explore-menus').textContent)"
TIMED = """(values) => {
  const start = performance.now();
  kbExplore.set(values);
  void document.body.offsetHeight;  // layout of what was rendered
  return performance.now() - start;
}"""


def _site(menus: Any) -> Path:
    from kb.api import open_kb, validate
    from kb.sitegen.build import build

    records = REPO / "records"
    result = validate(records, remember=False)
    out = Path(tempfile.mkdtemp(prefix="kb-bench-explorer-")) / "_site"
    shown = [f for f in result.findings if f.severity.value != "error"]
    build(open_kb(records, checked=result), out, findings=shown, plans=menus)
    return out


def _changes(menus: dict[str, Any], data: dict[str, dict[str, Any]]) -> list[dict[str, str]]:
    """CHANGES settings that differ from the one before in one or two controls."""
    settings = []
    models = [m[0] for m in menus["models"]]
    for i in range(CHANGES):
        model = models[i % len(models)]
        hardware = menus["hardware"][(i // 2) % len(menus["hardware"])][0]
        shape = menus["shapes"][(i // 3) % len(menus["shapes"])][0]
        batch = str(menus["batches"][(i // 5) % len(menus["batches"])])
        options = data[model]["options"].get(f"{hardware}|{shape}", [])
        degrees = options[(i * 7) % len(options)][0] if options else ""
        settings.append(
            {
                "model": model,
                "hardware": hardware,
                "shape": shape,
                "degrees": degrees,
                "batch": batch,
                "lengths": menus["lengths"][0][0],
                "engine": menus["engines"][0][0],
            }
        )
    return settings


def time_changes(site: Path) -> None:
    from tests.site.chromium import chromium, watched

    page_url = (site / "explore" / "index.html").as_uri()
    with chromium() as browser:
        for label, width in WIDTHS.items():
            page = browser.new_page(viewport={"width": width, "height": 900})
            problems = watched(page)
            page.goto(page_url)
            menus = page.evaluate(MENUS_JSON)
            loads = []
            for model, _ in menus["models"]:
                start = time.perf_counter()
                page.evaluate("m => new Promise(done => kbExplore.ready(m, done))", model)
                loads.append((time.perf_counter() - start) * 1000)
            data = page.evaluate("window.KB_EXPLORE_DATA")
            timings = [page.evaluate(TIMED, v) for v in _changes(menus, data)]
            timings.sort()
            p95 = timings[int(0.95 * (len(timings) - 1))]
            print(
                f"{label:8s} {width:5d} px: recompute after a change, {len(timings)} changes: "
                f"median {statistics.median(timings):.2f} ms, p95 {p95:.2f} ms, "
                f"max {timings[-1]:.2f} ms; first load of a model's data "
                f"(script fetch and parse, from file://): median {statistics.median(loads):.0f} ms"
                + (f"; problems: {problems}" if problems else "")
            )
            page.close()


def cost(menus: Any) -> None:
    """CPU seconds and data bytes of each model's pass (kb plan over its menus)."""
    from kb.api import open_kb, validate
    from kb.sitegen import explorer
    from kb.sitegen.plan_pages import model_pass

    records = REPO / "records"
    kb = open_kb(records, checked=validate(records, remember=False))
    kb.freeze()
    hardware = [h.id for h in explorer.planned_hardware(kb, menus)]
    total_cpu, total_bytes = 0.0, 0
    passes = {}
    for model in explorer.planned_models(kb, menus):
        start = time.process_time()
        done = passes[model.id] = model_pass(kb, model, hardware, menus)
        spent = time.process_time() - start
        size = len(done.script.encode("utf-8"))
        total_cpu, total_bytes = total_cpu + spent, total_bytes + size
        print(f"  {model.id:32s} {spent:7.2f} s CPU  {size / 1024:8.1f} KiB")
    print(f"  all models: {total_cpu:.1f} s CPU, {total_bytes / 1024 / 1024:.2f} MiB of data")
    kept_in_store(kb, passes)


def kept_in_store(kb: Any, passes: dict[str, Any]) -> None:
    """CPU to write every pass to kb's store and to read them back (a warm build's cost)."""
    from kb.sitegen.plan_pages import PassStore

    with tempfile.TemporaryDirectory(prefix="kb-bench-plans-") as cache:
        os.environ["KB_CACHE_DIR"] = cache
        start = time.process_time()
        store = PassStore(kb)
        for model, done in passes.items():
            store.put(model, "bench", done)
        store.save()
        saved = time.process_time() - start
        start = time.process_time()
        store = PassStore(kb)
        found = [store.get(model, "bench") for model in passes]
        read = time.process_time() - start
        del os.environ["KB_CACHE_DIR"]
    assert found == list(passes.values())  # what was kept is what was priced
    print(f"  kept in kb's store: {saved:.2f} s CPU to save, {read:.2f} s CPU to read back")


def main() -> None:
    from kb.sitegen.explorer import DEFAULT_MENUS

    small = _small_menus()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a site built by kb build (not --no-plans)")
    parser.add_argument("--cost", action="store_true", help="price each model's menus here")
    parser.add_argument("--full", action="store_true", help="--cost over kb build's menus")
    parser.add_argument("--no-browser", action="store_true", help="skip the recompute timing")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if args.cost:
        os.environ["KB_JOBS"] = "1"
        menus = DEFAULT_MENUS if args.full else small
        print(f"kb plan's pass per model ({'kb build' if args.full else 'small'} menus):")
        cost(menus)
    if args.no_browser:
        return
    site = args.site if args.site is not None else _site(small)
    time_changes(site)


if __name__ == "__main__":
    main()
