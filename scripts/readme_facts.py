"""The README's counts and tables, computed by kb from the shipped records (never by hand).

`python scripts/readme_facts.py` prints each generated block; `--write` replaces the
blocks between `<!-- kb:NAME -->` and `<!-- /kb:NAME -->` in README.md. The suite
(tests/project/test_readme_facts.py) fails when README.md differs from what this computes.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kb.api import open_kb  # noqa: E402
from kb.commands.listing import unvalidated_classes, unverified_figures  # noqa: E402
from kb.equations.engine import analyse  # noqa: E402
from kb.model import FOLDER_BY_KIND, KINDS, KnowledgeBase  # noqa: E402


def counts_block(kb: KnowledgeBase) -> str:
    by_kind = Counter(record.kind for record in kb)
    cells = ", ".join(f"{by_kind[kind]} {FOLDER_BY_KIND[kind]}" for kind in KINDS)
    unverified = len(list(unverified_figures(kb)))
    return (
        f"{len(kb)} records: {cells}; {unverified} figures are `basis: unverified` "
        "(`kb list --unverified`)."
    )


def predictions_block(kb: KnowledgeBase) -> str:
    analysis = analyse(kb, use_cache=False)
    rows = []
    for record in kb.of_kind("flop_class"):
        result = analysis.results.get(record.id)
        for item in result.items if result is not None else []:
            if item.kind == "prediction":
                rows.append(
                    f"| `{record.id}` | `{item.id}` | {item.computed} | {item.claimed} "
                    f"| {item.error} | {item.band} | {item.state} |"
                )
    unvalidated = unvalidated_classes(kb)
    total = len(kb.of_kind("flop_class"))
    lines = [
        f"{total - len(unvalidated)} of {total} flop classes carry predictions against "
        f"measured receipts; {len(unvalidated)} are listed by `kb list --unvalidated` "
        "with the reason each gives.",
        "",
    ]
    if rows:
        lines += [
            "| flop class | prediction | predicted | measured | error | band | state |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    return "\n".join(lines)


HOLDINGS = (("accelerator", "Accelerators"), ("interconnect", "Interconnects"), ("model", "Models"))


def holdings_block(kb: KnowledgeBase) -> str:
    """The hardware, links and models kb holds, by title, so the README never lists them by hand."""
    lines = []
    for kind, label in HOLDINGS:
        titles = sorted(str(record.data.get("title", record.id)) for record in kb.of_kind(kind))
        lines.append(f"- **{label}** ({len(titles)}): " + "; ".join(titles) + ".")
    return "\n".join(lines)


def unverified_block(kb: KnowledgeBase) -> str:
    """Every `basis: unverified` figure, one line each (what `kb list --unverified` prints)."""
    rows = [
        f"- `{row['id']}` `{row['pointer']}` = {row['value']}"
        + ("" if row["unit"] in (None, "1") else f" {row['unit']}")
        for row in unverified_figures(kb)
    ]
    return "\n".join(rows) if rows else "(none)"


BLOCKS = {
    "counts": counts_block,
    "holdings": holdings_block,
    "unverified": unverified_block,
    "predictions": predictions_block,
}


def generated(kb: KnowledgeBase) -> dict[str, str]:
    return {name: make(kb) for name, make in BLOCKS.items()}


def replace_blocks(text: str, blocks: dict[str, str]) -> str:
    for name, body in blocks.items():
        pattern = re.compile(rf"(<!-- kb:{name} -->\n)(?:.*?\n)?(<!-- /kb:{name} -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"README.md has no <!-- kb:{name} --> block")
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(2), text)
    return text


def main() -> None:
    kb = open_kb(REPO / "records")
    blocks = generated(kb)
    if "--write" in sys.argv:
        readme = REPO / "README.md"
        readme.write_text(
            replace_blocks(readme.read_text(encoding="utf-8"), blocks), encoding="utf-8"
        )
    else:
        for name, body in blocks.items():
            print(f"<!-- kb:{name} -->\n{body}\n<!-- /kb:{name} -->")


if __name__ == "__main__":
    main()
