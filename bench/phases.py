"""CPU seconds of each stage of one cold full check, in one process.

    python bench/phases.py RECORDS_PARENT [--collector on|off]

RECORDS_PARENT holds records/ (a bench corpus: bench/make_corpus.py). Each stage of
kb.checker is timed with time.process_time(), KB_JOBS=1, the cache in a fresh
temporary folder. `--collector off` pauses Python's cyclic collector as kb.api does
(kb.gcpause); `on` leaves it running, as the stages ran before kb.api paused it.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="the folder that holds records/")
    parser.add_argument("--collector", choices=("on", "off"), default="off")
    args = parser.parse_args(argv)
    os.environ["KB_JOBS"] = "1"
    os.environ["KB_CACHE_DIR"] = tempfile.mkdtemp(prefix="kb-phases-")
    if args.collector == "off":
        gc.disable()
    os.chdir(args.corpus)
    import kb.checker as c
    from kb import fingerprint
    from kb.incremental import file_states
    from kb.run import RunContext
    from kb.snapshot import Snapshot, write_snapshot
    from kb.store import cache_dir

    spent: dict[str, float] = {}

    def timed(name: str, function: Callable[..., Any], *parts: Any) -> Any:
        start = time.process_time()
        result = function(*parts)
        spent[name] = spent.get(name, 0.0) + time.process_time() - start
        return result

    begin = time.process_time()
    root = Path("records")
    cache = c.open_cache(root)
    run = RunContext()
    loaded = timed("load", c.load_stage, root, cache)
    kb = c.attach(timed("per-file", c.per_file_stage, loaded, run, cache), root, None)
    timed("schema", c.schema_stage, kb)
    timed("equations", c.equations_stage, kb)
    findings = c.waivers_stage(kb, timed("rules", c.rules_stage, kb))
    findings = timed("locate", c.locate_stage, findings + timed("rules", c.waiver_rules_stage, kb))

    def write() -> None:
        cache.save()
        snapshot = Snapshot(file_states(kb))
        snapshot.put_findings(findings)
        write_snapshot(cache_dir(root), fingerprint.salt(), root, snapshot)

    timed("writes", write)
    spent["total"] = time.process_time() - begin
    print(" ".join(f"{name}={seconds:.2f}" for name, seconds in spent.items()), len(findings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
