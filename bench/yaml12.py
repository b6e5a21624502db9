"""CPU seconds to parse a corpus with CSafeLoader, kb's loader and yaml-rs (a YAML 1.2 parser).

    pip install yaml-rs==0.1.6     # not a kb dependency: a measurement only
    python bench/yaml12.py RECORDS_DIR

Prints each parser's CPU time over every .yaml file, how many documents yaml-rs
reads as CSafeLoader does, and how the two read scalars YAML 1.1 and 1.2 disagree
on (BENCHMARKS.md: why kb does not use a second parser yet).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

DISAGREE = ("a: no", "a: yes", "a: 1e9", "a: 010", "a: 0o10", "a: 2026-11-30")


def timed(name: str, texts: list[str], parse: Callable[[str], Any]) -> list[Any]:
    start = time.process_time()
    parsed = [parse(text) for text in texts]
    print(f"{name}: {time.process_time() - start:.2f} s CPU")
    return parsed


def main(argv: list[str]) -> int:
    try:
        import yaml_rs  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        print("yaml-rs is not installed: pip install yaml-rs==0.1.6", file=sys.stderr)
        return 2
    from kb.yamlsafe import load_yaml

    texts = [p.read_text(encoding="utf-8") for p in sorted(Path(argv[0]).rglob("*.yaml"))]
    safe = timed("CSafeLoader", texts, lambda t: yaml.load(t, Loader=yaml.CSafeLoader))
    timed("kb.yamlsafe.load_yaml", texts, lambda t: load_yaml(t)[0])
    rust = timed("yaml_rs.loads", texts, lambda t: yaml_rs.loads(t, parse_datetime=False))
    same = sum(a == b for a, b in zip(safe, rust, strict=True))
    print(f"yaml-rs reads {same} of {len(texts)} documents as CSafeLoader does")
    for text in DISAGREE:
        old = yaml.load(text, Loader=yaml.CSafeLoader)
        print(f"{text!r}: YAML 1.1 {old!r}, yaml-rs {yaml_rs.loads(text, parse_datetime=False)!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
