"""Time `kb build`'s site generation and measure the site it writes.

    python bench/site_bench.py                 # the shipped records, then 10,000 synthetic
    python bench/site_bench.py --sizes 1000    # other synthetic sizes
    python bench/site_bench.py --quick         # shipped records and 500 synthetic (CI smoke)
    python bench/site_bench.py --rebuild-parts /tmp/kb-10k   # one change: CPU per part
    python bench/site_bench.py --parts /tmp/kb-10k   # CPU s of a cold build by part (site_parts.py)

For each corpus it prints: records, the validation time (checker, reported
apart), the cold build time (empty output folder), the size of the site (files
and bytes), a rebuild with nothing changed (every file kept, none rewritten)
and a rebuild after one record's title changed (only the pages that show it are
rewritten). The synthetic corpora come from bench/make_corpus.py. Timing is
reported, never judged.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from kb.api import open_kb, validate  # noqa: E402
from kb.model import KnowledgeBase  # noqa: E402
from kb.sitegen.build import build  # noqa: E402


def site_size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def retitled(kb: KnowledgeBase) -> tuple[KnowledgeBase, str]:
    """Copy `kb` with the title of its first accelerator changed."""
    target = kb.of_kind("accelerator")[0].id
    copy = KnowledgeBase(kb.root, dict(kb.records), list(kb.duplicates), list(kb.references))
    copy.run.schema = kb.run.schema  # the same verdict: only a title changes
    record = copy.records[target]
    copy.records[target] = dataclasses.replace(
        record, data={**record.data, "title": f"{record.title} (renamed)"}
    )
    return copy, target


def timed(action):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = action()
    return result, time.perf_counter() - started


def bench(label: str, records: Path, repo_root: Path, work: Path) -> None:
    result, check_s = timed(lambda: validate(records, remember=False))
    kb = open_kb(records, checked=result)
    out = work / f"site-{label}"
    report, cold_s = timed(lambda: build(kb, out))
    files, size = site_size(out)
    same, warm_s = timed(lambda: build(kb, out))
    changed_kb, target = retitled(kb)
    changed, one_s = timed(lambda: build(changed_kb, out))
    print(f"{label}: {len(kb)} records (validation {check_s:.2f} s, not part of the build)")
    print(
        f"  cold build      {cold_s:7.2f} s  {cold_s / max(len(kb), 1) * 1000:6.2f} ms/record"
        f"  -> {files} files, {size / 1e6:.1f} MB"
    )
    print(f"  unchanged       {warm_s:7.2f} s  rewrote {len(same.written)}, kept {len(same.kept)}")
    print(
        f"  one title edit  {one_s:7.2f} s  rewrote {len(changed.written)} "
        f"({target}), kept {len(changed.kept)}"
    )
    del report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000", help="synthetic corpus sizes, comma separated")
    parser.add_argument("--quick", action="store_true", help="shipped + 500 synthetic records")
    parser.add_argument(
        "--rebuild-parts",
        type=Path,
        metavar="CORPUS",
        help="time each part of `kb build` after one change (bench/rebuild_parts.py)",
    )
    parser.add_argument(
        "--parts",
        metavar="CORPUS|N",
        help="CPU seconds of a cold build by part: a folder holding records/, or a size",
    )
    parser.add_argument("--no-whole", action="store_true", help="with --parts: no whole build")
    args = parser.parse_args(argv)
    if args.rebuild_parts is not None:
        from rebuild_parts import main as rebuild_parts_main

        return rebuild_parts_main([str(args.rebuild_parts)])
    if args.parts:
        return _parts(args.parts, not args.no_whole)
    sizes = [500] if args.quick else [int(s) for s in args.sizes.split(",") if s]
    with tempfile.TemporaryDirectory(prefix="kb-site-bench-") as tmp:
        work = Path(tmp)
        bench("shipped", REPO / "records", REPO, work)
        from make_corpus import write_corpus

        for n in sizes:
            corpus = work / f"corpus-{n}"
            write_corpus(n, corpus)
            bench(f"synthetic-{n}", corpus / "records", REPO, work)
    return 0


def _parts(corpus: str, whole: bool) -> int:
    from site_parts import report

    if corpus.isdigit():
        with tempfile.TemporaryDirectory(prefix="kb-site-parts-") as tmp:
            from make_corpus import write_corpus

            write_corpus(int(corpus), Path(tmp))
            report(Path(tmp) / "records", whole)
        return 0
    report(Path(corpus) / "records", whole)
    return 0


if __name__ == "__main__":
    sys.exit(main())
