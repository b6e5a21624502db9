"""The premises of the author-mistake corpus's per-push tree (tests/authoring/corpus.py).

`sample_roots` argues that a mistake adds on the sample what it adds on the shipped
tree: the sample holds each edited record, what it cites, and every record citing it
unless the mistakes on it edit only its `summary`, which no record reads. Static
checks on the shipped records' references (one load per worker: tests/small_tree.py).
"""

from __future__ import annotations

from tests.authoring.corpus import mistakes, prose_only, sample_roots
from tests.sample import sample_files
from tests.small_tree import closure, shipped_file, shipped_kb


def test_the_sample_holds_each_edited_record_what_it_cites_and_who_cites_it() -> None:
    files = set(sample_files(sample_roots()))
    edits = [m for m in mistakes() if "edit" in m]
    assert edits
    cited_by: dict[str, set[str]] = {}
    for reference in shipped_kb().references:
        cited_by.setdefault(reference.target.split("#")[0], set()).add(reference.source_id)
    for mistake in edits:
        record_id = mistake["edit"]
        needed = closure([record_id])
        if not prose_only(mistake):
            needed |= closure(cited_by.get(record_id, set()))
        missing = sorted(rid for rid in needed if shipped_file(rid) not in files)
        assert not missing, (mistake["name"], missing)
    assert len(files) < len(shipped_kb().records)  # a sample, not the tree


def test_prose_only_edits_touch_the_summary_and_no_record_reads_a_summary() -> None:
    prose = [m for m in mistakes() if prose_only(m)]
    assert {m["name"] for m in prose} >= {"prose-template-field-typo"}
    for mistake in prose:  # the replaced text is prose of the summary, not a field
        assert mistake["replace"] in str(
            shipped_kb().records[mistake["edit"]].data.get("summary", "")
        ), mistake["name"]
    # a referrer reads a record by id or by `id#field`; none reads another's summary
    summaries = [r.target for r in shipped_kb().references if r.target.endswith("#summary")]
    assert summaries == []


def test_prose_only_is_false_for_an_edit_of_a_field() -> None:
    edit = {"edit": "models/llama-2-70b", "replace": "  d_model: 8192\n", "with": "  d_model: 1\n"}
    assert not prose_only(edit)
    assert not prose_only({"add": "sources/x.yaml", "text": "kind: source\n"})
