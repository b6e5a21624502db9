"""One site with the planner's pages for the explorer tests, built once per test process.

Small menus (two models, one accelerator, both node shapes, two batches) keep the
build to seconds while covering a feasible model, an infeasible one (DeepSeek-V3
in bf16 fits neither 8 nor 16 H100), mappings kb cannot price, and one and two
nodes. `kb plan` answers the same questions from the same records copy
(`plan_json`).

The records are the shipped ones (kb plan prices from flop classes it names and from
receipts it scans by pattern: a closure of the menus' records prices differently), their
stores seeded from the run's one cold check (`shipped_stores`, tests/warm.py): the check
before the build reads every file's results from them instead of deriving each claim
again with SymPy (~13 CPU-s), and is still a full check of every file.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kb.sitegen.explorer import Menus
from tests.site.conftest import copy_repo, load

MENUS = Menus(
    models=("models/llama-3.1-70b", "models/deepseek-v3"),
    hardware=("hardware/nvidia-h100-sxm",),
    batches=(1, 64),
)


@cache
def explorer_site(stores: Path) -> tuple[Path, Path]:
    """(records folder, site folder): the shipped records built with MENUS.

    `stores`: the `shipped_stores` fixture's folder, seeded beside the copy.
    """
    from kb.sitegen.build import build
    from tests.warm import seed

    folder = Path(tempfile.mkdtemp(prefix="kb-explorer-"))
    atexit.register(shutil.rmtree, folder, True)
    seed(stores, folder / ".kb-cache")
    records = copy_repo(folder) / "records"
    kb, findings = load(records)
    out = folder / "_site"
    build(kb, out, findings=[f for f in findings if f.severity.value != "error"], plans=MENUS)
    return records, out


def plan_json(records: Path, *args: str) -> dict[str, Any]:
    """`kb plan ARGS --format json` on `records`, parsed (exit 0, or 1: nothing fits)."""
    from kb.cli import cli

    result = CliRunner().invoke(cli, ["plan", *args, "--format", "json", "--root", str(records)])
    assert result.exit_code in (0, 1), result.output
    found: dict[str, Any] = json.loads(result.output)
    return found


def data_of(site: Path, model: str) -> dict[str, Any]:
    """A model's explorer data file, parsed (the script assigns one JSON object)."""
    from kb.sitegen import urls

    text = (site / urls.explore_data(model)).read_text(encoding="utf-8")
    payload = text.split(f"window.KB_EXPLORE_DATA[{json.dumps(model)}] = ", 1)[1]
    found: dict[str, Any] = json.loads(payload.rstrip().removesuffix(";"))
    return found
