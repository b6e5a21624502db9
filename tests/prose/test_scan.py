"""kb.prose.scan: what counts as a bare number in prose, templates and quotations.

The table pins the documented definition (docs/record-format.md, "Numbers in
prose"); the properties hold it on any text: no crash, and nothing inside a
template, a quotation or a code span is ever flagged.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.prose.scan import bare_numbers, protected, templates

FLAGGED = [
    ("80 GB of HBM at 3.35 TB/s", ["80", "3.35"]),
    ("NVIDIA quotes 1,979 with sparsity", ["1,979"]),
    ("a 1.44x speedup, not 2x; 89% of peak", ["1.44", "2", "89"]),
    ("written 1.0e+9", ["1.0e+9"]),
    ("80GB, 37us, 3.35TBps, 128K context", ["80", "37", "3.35", "128"]),
    ("3-5 us, 2:4 sparsity, 1/2 of it, at 11:15", ["3", "5", "2", "4", "1", "2", "11", "15"]),
    ("B = 64 and B=64", ["64", "64"]),
    ("(about 6 us).", ["6"]),
    ("~1,500 numbers", ["1,500"]),
    ("TP 8 and 18 links", ["8", "18"]),
]
NOT_FLAGGED = [
    "H100, TP8, Llama-2-7B, Mixtral 8x22B, TPU v5e, bf16, x16, MI300X, A100-80G, 8-GPU board",
    "Llama 3.1 70B, Llama 3.1 405B, NVLink 4, PCIe 5.0 x16, CUDA 12.4, seed 003, issue 12, PR 4567",
    "the step 2*L*(alpha + 2*(N-1)*B*d*b/(N*W)) with 2^30 bytes",
    "on 2026-12-01 with NCCL v2.18.3 and 2.27.7, see #4567 and §3.1",
    "see https://example.com/a/100/b?x=3 or www.example.org/v2/9",
    "the code `x = 3.35` says",
    'the vendor says "80 GB at 3.35 TB/s" and “989 TFLOP/s”',
    "{hardware/nvidia-h100-sxm#memory.bandwidth|TB/s} and {claim:b-star-tp8} and {#links.0.count}",
    "4th generation, 3D torus, 128b/130b encoding, GB200 NVL72, ConnectX-7",
    "Hopper, no digits at all.",
]


@pytest.mark.parametrize(("text", "numbers"), FLAGGED)
def test_figures_are_flagged(text: str, numbers: list[str]) -> None:
    assert [n.text for n in bare_numbers(text)] == numbers


@pytest.mark.parametrize("text", NOT_FLAGGED)
def test_names_formulas_dates_templates_and_quotes_are_not(text: str) -> None:
    assert bare_numbers(text) == []


def test_a_flagged_number_points_at_its_characters() -> None:
    text = "HBM3 at 3.35 TB/s, 1,979 sparse"
    assert [(text[n.start : n.end], n.start) for n in bare_numbers(text)] == [
        ("3.35", 8),
        ("1,979", 19),
    ]


def test_an_unclosed_quotation_protects_nothing() -> None:
    assert [n.text for n in bare_numbers('he said "80 GB')] == ["80"]


@pytest.mark.parametrize(
    ("inner", "error"),
    [
        ("hardware/x#memory.bandwidth", ""),
        ("hardware/x#memory.bandwidth|TB/s", ""),
        ("#memory.bandwidth", ""),
        ("claim:b-star", ""),
        ("flops/x#claim:b-star|us", ""),
        ("memory.bandwidth#", "write"),
        ("hardware/x#memory..bandwidth", "write"),
        ("hardware/x#memory.bandwidth|", "empty"),
        ("Hardware/X#memory", "write"),
        ("hardware/../x#memory", "write"),
    ],
)
def test_templates_parse_or_say_why_not(inner: str, error: str) -> None:
    (found,) = templates("see {" + inner + "} here")
    assert (found.start, found.raw) == (4, "{" + inner + "}")
    assert error in found.error if error else found.error == ""


def test_braces_around_ordinary_text_are_no_template() -> None:
    assert templates("a {value: 3350, unit: GB/s} mapping") == []
    assert [n.text for n in bare_numbers("a {value: 3350, unit: GB/s} mapping")] == ["3350"]


def test_a_template_names_the_reference_it_makes() -> None:
    targets = [t.target for t in templates("{hardware/x#a.b} {flops/y#claim:z} {#c} {claim:d}")]
    assert targets == ["hardware/x#a.b", "flops/y#claim:z", "", ""]


TEXT = st.text(st.characters(codec="utf-8"), max_size=200)
PROSE = st.text(
    st.sampled_from(list('0123456789 .,-/:%xkKMBGHTPv#§{}|"“”`*^=()_abcTB')), max_size=120
)
PROTECTED = st.one_of(
    st.from_regex(
        r"\{hardware/[a-z0-9]{1,6}#[a-z]{1,6}(\.[0-9]{1,2})?(\|[A-Za-z/]{1,5})?\}", fullmatch=True
    ),
    st.from_regex(r"\{claim:[a-z][a-z0-9-]{0,8}\}", fullmatch=True),
    st.from_regex(r'"[^"\n]{0,30}"', fullmatch=True),
    st.from_regex(r"`[^`\n]{0,30}`", fullmatch=True),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXT, PROSE))
def test_any_text_scans_without_crashing_and_tokens_lie_in_it(text: str) -> None:
    spans = protected(text)
    for number in bare_numbers(text):
        assert text[number.start : number.end] == number.text
        assert number.text[0].isdigit()
        assert not any(lo <= number.start < hi for lo, hi, _ in spans)


@settings(max_examples=300, deadline=None)
@given(PROSE, PROTECTED, PROSE)
def test_nothing_inside_a_template_quotation_or_code_span_is_flagged(
    before: str, inner: str, after: str
) -> None:
    # separated by spaces, and the neighbours free of quote marks and backticks, so that
    # `inner` stays one protected span whatever surrounds it
    clean = str.maketrans("", "", '"“”`{}')
    text = f"{before.translate(clean)} {inner} {after.translate(clean)}"
    start = len(before.translate(clean)) + 1
    end = start + len(inner)
    assert not any(start <= n.start < end for n in bare_numbers(text))


def test_no_character_is_both_a_letter_and_a_digit() -> None:
    """The premise of scan._has_digit's fast answer for words of letters (`str.isalpha`)."""
    import sys

    both = [c for c in map(chr, range(sys.maxunicode + 1)) if c.isalpha() and c.isdigit()]
    assert both == []
