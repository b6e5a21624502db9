"""kb.suggest, the one "did you mean" matcher, and every command that uses it (run for real)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kb.suggest import CUTOFF, closest, ranked_matches, word_score
from tests.inprocess import kb_in_process

HARDWARE = [
    "hardware/nvidia-a100-80gb-sxm4",
    "hardware/nvidia-b200",
    "hardware/nvidia-gb200",
    "hardware/nvidia-h100-sxm",
    "hardware/nvidia-h200-sxm",
    "flops/nvidia-h200",  # another folder: never preferred over the same folder
]


@pytest.mark.parametrize(
    ("wanted", "meant"),
    [
        ("hardware/nvidia-h200", "hardware/nvidia-h200-sxm"),  # a prefix matcher said A100
        ("hardware/nvidia-a100", "hardware/nvidia-a100-80gb-sxm4"),
        ("hardware/h100-sxm", "hardware/nvidia-h100-sxm"),
        ("hardware/nvidia-h200-sxm5", "hardware/nvidia-h200-sxm"),
        ("hardware/NVIDIA-B200X", "hardware/nvidia-b200"),
        ("hardwre/nvidia-gb200", "hardware/nvidia-gb200"),  # a mistyped folder still helps
    ],
)
def test_ids_rank_by_words_within_the_folder(wanted: str, meant: str) -> None:
    assert closest(wanted, HARDWARE) == meant


@pytest.mark.parametrize("wanted", ["hardware/zzz", "hardware/amd-mi300x", ""])
def test_nothing_close_suggests_nothing(wanted: str) -> None:
    assert closest(wanted, HARDWARE) is None


def test_codes_and_symbols_use_the_same_cutoff() -> None:
    assert closest("SCOO1", ["SC001", "RF001", "SC", "RF"]) == "SC001"  # ratio exactly CUTOFF
    assert closest("BW_hmb", ["BW_hbm", "BW_link", "t_step"]) == "BW_hbm"
    assert closest("ZZ", ["SC001", "RF001"]) is None


@given(st.text(min_size=1, max_size=12), st.lists(st.text(max_size=12), max_size=8))
def test_suggestions_are_known_close_and_never_the_name_itself(
    wanted: str, known: list[str]
) -> None:
    ranked = ranked_matches(wanted, known)
    assert set(ranked) <= set(known) - {wanted}
    assert len(ranked) == len(set(ranked))
    if "/" not in wanted:
        assert all(word_score(wanted.lower(), k.lower()) >= CUTOFF for k in ranked)


@given(
    st.text(alphabet="ab-/", max_size=8),
    st.lists(st.text(alphabet="ab-/", max_size=8), max_size=8),
    st.lists(st.text(alphabet="ab-/", max_size=8), max_size=8),
)
def test_a_remembered_suggestion_is_the_one_made_afresh(
    wanted: str, known: list[str], other: list[str]
) -> None:
    """`closest` keeps its last answers (kb.suggest.MEMO): each is what the matcher says now,
    for these very names in any order, and never one made for another list."""
    for names in (known, other, list(reversed(known)), known + other, known):
        ranked = ranked_matches(wanted, names)
        assert closest(wanted, names) == (ranked[0] if ranked else None)


def test_a_long_list_is_matched_but_not_remembered() -> None:
    from kb import suggest

    suggest._remembered.cache_clear()
    many = [f"hardware/part-{i:05d}" for i in range(suggest.MAX_CANDIDATES + 1)]
    assert closest("hardware/part-00007x", many) == "hardware/part-00007"
    assert closest("hardware/nvidia-h200", HARDWARE) == "hardware/nvidia-h200-sxm"
    assert suggest._remembered.cache_info().currsize == 1  # the short list only


ROOT = ["--root", "{records}"]  # a copy of the shipped records with warm stores (`warm_copy`)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["show", "hardware/nvidia-h200", *ROOT], "did you mean 'hardware/nvidia-h200-sxm'?"),
        (["show", "nvidia-h200", *ROOT], "did you mean 'hardware/nvidia-h200-sxm'?"),
        (["calc", "flops/pipeline-buble", *ROOT], "did you mean 'flops/pipeline-bubble'?"),
        (
            ["calc", "flops/tp-decode-allreduce-time", "step_tme", *ROOT],
            "'step_tme' (did you mean 'step_time'?) is neither an equation nor a symbol",
        ),
        (
            [
                "calc",
                "flops/tp-decode-allreduce-time",
                "step_time",
                "--set",
                "BW_hmb=1 GB/s",
                *ROOT,
            ],
            "not symbols of flops/tp-decode-allreduce-time: 'BW_hmb' (did you mean 'BW_hbm'?)",
        ),
        (
            ["ledger", "placements/coherent-host-vs-two-hosts-8", *ROOT],
            "did you mean 'placements/coherent-host-vs-two-hosts-8b'?",
        ),
        (
            ["ledger", "hardware/nvidia-h200-sxm", *ROOT],
            "'hardware/nvidia-h200-sxm' is an accelerator record, not a placement",
        ),
        (["explain", "RF01"], "no rule 'RF01'; did you mean RF001?"),
        (["validate", "--select", "EQ0O1", *ROOT], "EQ0O1; did you mean EQ001?"),
        (["validate", "--ignore", "WV01", *ROOT], "WV01; did you mean WV001?"),
    ],
)
def test_every_command_suggests_the_name_meant(
    args: list[str], said: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """On the shipped records, copied with the stores one cold run left (tests/warm.py): a
    command that analyses the tree before it answers (`kb ledger`) derives nothing again,
    and nothing is written beside the repository's records."""
    if "{records}" in args:
        records = str(request.getfixturevalue("warm_copy"))
        args = [records if arg == "{records}" else arg for arg in args]
    done = kb_in_process(args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr
    assert "Traceback" not in done.stderr


def test_rf001_suggests_the_id_meant(warm_copy: Path) -> None:
    path = warm_copy / "placements" / "llama-3.1-405b-one-h200-node-vs-two-h100-nodes.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("hardware: hardware/nvidia-h200-sxm,", "hardware: hardware/nvidia-h200,", 1)
    )
    done = kb_in_process(
        ["validate", "--select", "RF001", "--root", str(warm_copy)], cwd=warm_copy.parent
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "RF001" in done.stdout
    assert "did you mean 'hardware/nvidia-h200-sxm'?" in done.stdout
