"""Hold a fast path to the slow one: the same findings from two copies of kb's code.

    python bench/equivalence.py --base /tmp/kb-main/kb --n 1000,10000

For each N it writes bench/make_corpus.py's corpus and a broken copy of it
(every 37th file damaged in one of the ways below: a syntax error, a repeated
key, a refused tag, a schema violation, a dangling reference, a figure the
claims refute, a YAML 1.1 boolean, an empty file, a deep nesting), then runs
`kb validate --full --format json` on each with the code under test (this
tree's kb/) and with the code at `--base` (a copy of another revision's kb/
folder), each with its own empty cache, and compares the outputs byte for
byte. It also compares the shipped records, and the sites `kb build` writes
of the shipped records and of the clean corpora up to `--build-max` (every
file's bytes but the build manifest, a cache salted with kb's code). It
prints one line per comparison and exits 1 if any differ.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from make_corpus import write_corpus  # noqa: E402

EVERY = 37  # one file in EVERY is damaged
# A check that runs out of its time budget (EQ014) depends on how busy the machine is,
# not on the code: both sides get a budget a busy machine does not exhaust.
UNHURRIED = {"KB_EQ_BUDGET": "60"}
# `python -m kb` puts its working folder first on sys.path: run from a checkout (the
# shipped records' root), it would import that checkout's kb/ on both sides and compare
# a tree with itself. PYTHONSAFEPATH (Python 3.11) keeps PYTHONPATH's kb first.
CODE_ONLY = {"PYTHONSAFEPATH": "1"}
# The build's own cache of what it rendered: salted with kb's code, so it differs by design.
MANIFEST = ".kb-build-manifest.kbstore"


def _syntax(text: str) -> str:
    return text.replace("\n", "\n  : [unclosed\n", 1)


def _repeated_key(text: str) -> str:
    first = next(line for line in text.splitlines() if line.startswith("id:"))
    return f"{text}{first}\n"


def _tag(text: str) -> str:
    return f"{text}extra: !!python/name:os.system x\n"


def _schema(text: str) -> str:
    return text.replace("\nversion: ", "\nversion: not-a-number-", 1)


def _dangling(text: str) -> str:
    return text.replace("sources/bench-src-", "sources/no-such-src-", 1)


def _refuted(text: str) -> str:
    return text.replace("{value: ", "{value: 1000", 1)


def _yaml11(text: str) -> str:
    return f"{text}notes_flag: no\n"


def _empty(text: str) -> str:
    return ""


def _deep(text: str) -> str:
    return f"{text}deep: {'[' * 80}{']' * 80}\n"


DAMAGE: tuple[Callable[[str], str], ...] = (
    _syntax,
    _repeated_key,
    _tag,
    _schema,
    _dangling,
    _refuted,
    _yaml11,
    _empty,
    _deep,
)


def break_corpus(records: Path) -> int:
    """Damage every EVERY-th file under `records` (sorted order); how many were damaged."""
    damaged = 0
    for index, path in enumerate(sorted(records.rglob("*.yaml"))):
        if index % EVERY == 0:
            damage = DAMAGE[(index // EVERY) % len(DAMAGE)]
            path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
            damaged += 1
    return damaged


def findings(code: Path, root: Path, cache: Path) -> tuple[bytes, int]:
    """`kb validate --full --format json` of `root` with kb from `code`: output and exit code."""
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(code), KB_CACHE_DIR=str(cache), **UNHURRIED, **CODE_ONLY)
    done = subprocess.run(
        [sys.executable, "-m", "kb", "validate", "--full", "--format", "json"],
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    )
    return done.stdout, done.returncode


def compare(name: str, root: Path, base: Path, here: Path, work: Path) -> bool:
    old, old_exit = findings(base, root, work / "cache-base")
    new, new_exit = findings(here, root, work / "cache-here")
    same = old == new and old_exit == new_exit
    verdict = "identical" if same else "DIFFERENT"
    print(f"{name}: {verdict} ({len(new):,} bytes of JSON, exit {new_exit})", flush=True)
    if not same:
        (work / f"{name}.base.json").write_bytes(old)
        (work / f"{name}.here.json").write_bytes(new)
    return same


def site(code: Path, root: Path, work: Path, name: str) -> dict[str, bytes]:
    """Every file of the site `kb build` writes of `root` with kb from `code`, by path."""
    out, cache = work / f"site-{name}", work / f"cache-{name}"
    for folder in (out, cache):
        shutil.rmtree(folder, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(code), KB_CACHE_DIR=str(cache), **UNHURRIED, **CODE_ONLY)
    command = [sys.executable, "-m", "kb", "build", "--out", str(out)]
    subprocess.run(command, cwd=root, env=env, capture_output=True, check=True)
    files = {
        str(p.relative_to(out)): p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and p.name != MANIFEST
    }
    shutil.rmtree(out)
    return files


def compare_sites(name: str, root: Path, base: Path, here: Path, work: Path) -> bool:
    old, new = site(base, root, work, "base"), site(here, root, work, "here")
    differing = sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
    verdict = "identical" if not differing else f"DIFFERENT in {differing[:5]}"
    print(f"site of {name}: {verdict} ({len(new):,} files)", flush=True)
    return not differing


def code_copy(folder: Path, into: Path) -> Path:
    """A copy of a kb/ folder under `into` (a PYTHONPATH entry), without caches."""
    shutil.copytree(folder, into / "kb", ignore=shutil.ignore_patterns("__pycache__"))
    return into


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="the kb/ folder to compare with")
    parser.add_argument("--n", default="1000,10000", help="comma-separated corpus sizes")
    parser.add_argument("--build-max", type=int, default=1000, help="compare sites up to this N")
    parser.add_argument("--work", type=Path, help="where corpora go (default: a temp folder)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="kb-equivalence-"))
    base = code_copy(args.base, work / "base")
    here = code_copy(REPO / "kb", work / "here")
    same = compare("shipped", REPO, base, here, work)
    same &= compare_sites("shipped", REPO, base, here, work)
    for n in (int(s) for s in args.n.split(",") if s):
        corpus = work / f"kb-{n}"
        write_corpus(n, corpus)
        same &= compare(f"corpus-{n}", corpus, base, here, work)
        if n <= args.build_max:
            same &= compare_sites(f"corpus-{n}", corpus, base, here, work)
        print(f"  damaged {break_corpus(corpus / 'records')} files", flush=True)
        same &= compare(f"broken-{n}", corpus, base, here, work)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
