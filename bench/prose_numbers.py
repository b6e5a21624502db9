"""Count the bare numbers left in prose (what PR003 flags), by folder and by field.

    python bench/prose_numbers.py             # the shipped records, a Markdown table
    python bench/prose_numbers.py --root DIR  # another records tree

A field is the key that holds the text (`summary`, `note`, `text`, ...; a list
item counts under its list's key). History entries' `change`, which PR003 does
not check, are counted apart so the table says what the rule skips. The count
is the rule's own (kb.prose.scan.bare_numbers over kb.prose.fields), not a copy.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from kb.findings import pointer_parts
from kb.loader import load_knowledge_base
from kb.prose.fields import numbers_checked, prose_fields
from kb.prose.scan import bare_numbers

REPO = Path(__file__).resolve().parent.parent
SKIPPED = "history change (not checked)"


def count(root: Path) -> Counter[tuple[str, str]]:
    """(folder, field) -> bare numbers, over every record under `root`."""
    kb, _ = load_knowledge_base(root)
    found: Counter[tuple[str, str]] = Counter()
    for record in kb:
        folder = record.id.split("/")[0]
        for pointer, text in prose_fields(record.data):
            numbers = len(bare_numbers(text))
            if numbers:
                found[(folder, _field(pointer) if numbers_checked(pointer) else SKIPPED)] += numbers
    return found


def _field(pointer: str) -> str:
    keys = [p for p in pointer_parts(pointer) if not p.isdigit()]
    return keys[-1] if keys else "?"


def table(found: Counter[tuple[str, str]]) -> str:
    folders = sorted({folder for folder, _ in found})
    fields = sorted({field for _, field in found}, key=lambda f: (f == SKIPPED, f))
    rows = [
        "| field | " + " | ".join(folders) + " | total |",
        "|---|" + "---:|" * (len(folders) + 1),
    ]
    for field in fields:
        cells = [found.get((folder, field), 0) for folder in folders]
        rows.append(f"| {field} | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    checked = [
        sum(n for (f, k), n in found.items() if f == folder and k != SKIPPED) for folder in folders
    ]
    rows.append("| **flagged (PR003)** | " + " | ".join(map(str, checked)) + f" | {sum(checked)} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=REPO / "records")
    print(table(count(parser.parse_args().root)))


if __name__ == "__main__":
    main()
