"""The floors kb is measured against, each run by bench/run.py as its own process.

    python bench/floor.py read   RECORDS_DIR   # read every .yaml file (bytes)
    python bench/floor.py parse  RECORDS_DIR   # ... and parse it with libyaml's CSafeLoader
    python bench/floor.py schema RECORDS_DIR   # kb's schema-only work: load, validate, locate

`schema` is the part of `kb validate` that check-jsonschema also does: load the
files, validate each against its kind's schema, and give every error a line:col.
Each mode prints one line (`<mode> <files> <findings>`) so the runner can check
that the work was done.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml


def yaml_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.yaml"))


def read_all(root: Path) -> int:
    total = 0
    for path in yaml_files(root):
        total += len(path.read_bytes())
    return total


def parse_all(root: Path) -> int:
    loader = yaml.CSafeLoader
    parsed = 0
    for path in yaml_files(root):
        if yaml.load(path.read_bytes().decode("utf-8"), Loader=loader) is not None:
            parsed += 1
    return parsed


def schema_only(root: Path) -> int:
    from kb.checker import locate_stage, schema_stage
    from kb.loader import load_knowledge_base
    from kb.rules._base import finding_of

    kb, problems = load_knowledge_base(root)
    located = locate_stage([*(finding_of(p) for p in problems), *schema_stage(kb)])
    return len(located)


MODES = {"read": read_all, "parse": parse_all, "schema": schema_only}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in MODES:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[1])
    result = MODES[argv[0]](root)
    print(f"{argv[0]} {len(yaml_files(root))} {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
