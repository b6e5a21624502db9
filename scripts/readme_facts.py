"""The README's counts and tables, computed by kb from the shipped records (never by hand).

`python scripts/readme_facts.py` prints each generated block; `--write` replaces the
blocks between `<!-- kb:NAME -->` and `<!-- /kb:NAME -->` in README.md. The suite
(tests/project/test_readme_facts.py) fails when README.md differs from what this computes.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kb.api import open_kb  # noqa: E402
from kb.commands.listing import (  # noqa: E402
    prediction_rows,
    unvalidated_classes,
    unverified_figures,
)
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
    """The table `kb list --predictions --kind flop_class` prints (one source for both)."""
    rows = [
        f"| `{row['id']}` | `{row['prediction']}` | {row['predicted']} | {row['measured']} "
        f"| {row['error']} | {row['band']} | {row['state']} |"
        for row in prediction_rows(kb, "flop_class")
    ]
    unvalidated = unvalidated_classes(kb)
    total = len(kb.of_kind("flop_class"))
    lines = [
        f"{total - len(unvalidated)} of {total} flop classes carry predictions or bounds against "
        f"measured receipts; {len(unvalidated)} are listed by `kb list --unvalidated` "
        "with the reason each gives.",
        "",
    ]
    if rows:
        lines += [
            "| flop class | prediction | predicted | measured | error | band or bound | state |",
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


def end_to_end_block(kb: KnowledgeBase) -> str:
    """The validation rows of `kb list --end-to-end`, their distribution, and every other row."""
    from kb.checker import schema_stage
    from kb.ledger.endtoend import CALIBRATION, NOT_EVALUABLE, UNDETERMINED, report_row, summary
    from kb.ledger.kept import end_to_end_rows

    if kb.run.schema is None:
        schema_stage(kb)  # the composed ledger reads typed views
    results = end_to_end_rows(kb)  # `kb list --end-to-end`'s rows (kept while nothing changes)
    rows = [report_row(r) for r in results]
    totals = summary(results)
    exact = totals["exact"]
    median = Fraction(exact["median_abs_error"]) if exact["median_abs_error"] else None
    share = Fraction(exact["share_within_band"]) if exact["share_within_band"] else None
    median_holds = median is not None and median <= Fraction(15, 100)
    share_holds = share is not None and share >= Fraction(8, 10)
    verdict = {
        (True, True): "holds",
        (True, False): "holds for the median, not for the share within the band",
        (False, True): "holds for the share within the band, not for the median",
        (False, False): "does not hold",
    }[(median_holds, share_holds)]
    states = ", ".join(f"{n} {state}" for state, n in sorted(totals["states"].items()))
    lines = [
        f"{totals['rows']} end-to-end receipt rows: {states}. On the "
        f"{totals['validation_rows']} validation rows the median |error| is "
        f"{totals['median_abs_error']} and {totals['within_band']} "
        f"({totals['share_within_band']}) are within ±{totals['band']}: the acceptance "
        f"target (median ≤ 15%, at least 80% within ±25%) "
        f"{verdict}.",
        "",
        "| receipt | row | conditions | measures | predicted | measured | error | state |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row["state"] in ("validated", "contradicted"):
            state = row["state"] + (f" ({row['reason']})" if row["reason"] else "")
            lines.append(
                f"| `{row['receipt']}` | {row['label']} | {row['conditions']} | "
                f"{row['measures']} | {row['predicted']} | {row['measured']} | "
                f"{row['error']} | {state} |"
            )
    calibration = [r for r in rows if r["state"] == CALIBRATION]
    lines += ["", f"Calibration rows ({len(calibration)}; never validation):"]
    for row in calibration:
        shown = f"{row['predicted']} against {row['measured']} ({row['error']})"
        lines.append(
            f"- `{row['receipt']}` {row['label']}: "
            + (shown if row["predicted"] else row["reason"])
        )
    undetermined = [r for r in rows if r["state"] == UNDETERMINED]
    if undetermined:  # the heading only over rows (none since session 22)
        lines += [
            "",
            f"Undetermined rows ({len(undetermined)}; the source leaves the layout open, each "
            "layout is priced, and the measurement cannot tell which ran: never validation):",
        ]
    lines += [f"- `{r['receipt']}` {r['label']}: {r['reason']}" for r in undetermined]
    reasons: Counter[str] = Counter()
    metrics: Counter[str] = Counter()
    for row in rows:
        if row["state"] != NOT_EVALUABLE:
            continue
        if row["reason"].startswith("measures '"):
            metrics[row["reason"][len("measures '") : row["reason"].rindex("', which")]] += 1
        else:
            reasons[row["reason"]] += 1
    lines += ["", f"Not evaluable ({totals['states'].get(NOT_EVALUABLE, 0)} rows), by reason:"]
    lines += [f"- {n} x {reason}" for reason, n in sorted(reasons.items(), key=lambda x: -x[1])]
    if metrics:
        listed = "; ".join(f"{m} ({n})" for m, n in sorted(metrics.items()))
        lines.append(
            f"- {sum(metrics.values())} x a metric the composition does not predict: {listed}"
        )
    return "\n".join(lines)


BLOCKS = {
    "counts": counts_block,
    "holdings": holdings_block,
    "unverified": unverified_block,
    "predictions": predictions_block,
    "end-to-end": end_to_end_block,
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
