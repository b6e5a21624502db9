"""Search relevance: what a reader types finds the record they mean, first.

The site's own search (static/search.js over the built search-index.js) runs in
chromium from file://, as the page runs it. Each query names the record expected
first; where two records hold exactly the same figure (the H200 and the GH200
144 GB both have 4.8 TB/s of HBM), either is right and both are named.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.site.chromium import chromium, watched

pytestmark = pytest.mark.browser

H200 = "hardware/nvidia-h200-sxm"
H200_BANDWIDTH = (H200, "hardware/nvidia-gh200-144gb")  # both 4.8 TB/s
H100 = "hardware/nvidia-h100-sxm"
SEED = "flops/sched-tensor-parallel-crossover"

# (query, the acceptable first results)
SUITE: tuple[tuple[str, tuple[str, ...]], ...] = (
    # symbols, ids and titles
    ("B*", (SEED,)),
    ("B_star", (SEED,)),
    ("h200", (H200,)),
    ("nvidia-h200-sxm", (H200,)),
    ("hardware/nvidia-h100-sxm", (H100,)),
    ("Tensor-parallel all-reduce crossover batch", (SEED,)),
    ("crossover", (SEED,)),
    ("alpha", ("flops/allreduce-latency-floor",)),
    ("b200", ("hardware/nvidia-b200",)),
    ("mi300x", ("hardware/amd-instinct-mi300x",)),
    ("gaudi 3", ("hardware/intel-gaudi-3",)),
    ("tpu v5e", ("hardware/google-tpu-v5e",)),
    ("h100 sxm", (H100,)),
    ("nvlink 5", ("interconnects/nvlink-5",)),
    ("nvlink 4", ("interconnects/nvlink-4",)),
    ("pcie 5", ("interconnects/pcie-5-x16",)),
    ("pcie 4", ("interconnects/pcie-4-x16",)),
    ("infiniband ndr", ("interconnects/infiniband-ndr",)),
    ("infiniband xdr", ("interconnects/infiniband-xdr",)),
    # four Llama 70B records: any of them answers "llama 70b"
    (
        "llama 70b",
        (
            "models/llama-3.1-70b",
            "models/llama-2-70b",
            "models/llama-3-70b",
            "models/llama-3.3-70b",
        ),
    ),
    ("llama 405b", ("models/llama-3.1-405b",)),
    ("llama 3.1 8b", ("models/llama-3.1-8b",)),
    ("deepseek v3", ("models/deepseek-v3",)),
    ("mixtral 8x7b", ("models/mixtral-8x7b",)),
    ("tensor parallel", ("strategies/tensor-parallel",)),
    ("data parallel", ("strategies/data-parallel",)),
    ("pipeline bubble", ("flops/pipeline-bubble",)),
    ("speculative decoding", ("flops/serving-speculative-decoding",)),
    ("chunked prefill", ("flops/serving-chunked-prefill",)),
    ("energy per token", ("flops/serving-energy-cost-per-token",)),
    ("kv cache", ("flops/decode-kv-cache-read",)),
    ("all-to-all", ("flops/expert-all-to-all",)),
    ("ridge", ("flops/prefill-gemm-ridge",)),
    ("TP4 vs TP8", ("placements/tp-llama-3.1-70b-h100-tp4-vs-tp8",)),
    # figures, in either unit, with or without a space
    ("4800 GB/s", H200_BANDWIDTH),
    ("4.8TB/s", H200_BANDWIDTH),
    ("4.8 TB/s", H200_BANDWIDTH),
    ("4800", H200_BANDWIDTH),
    ("3350 GB/s", (H100, "hardware/nvidia-h800")),  # the H800 keeps the H100's HBM3
    ("3.35TB/s", (H100, "hardware/nvidia-h800")),
    ("192 GB", ("hardware/amd-instinct-mi300x",)),
    # field words: the record, answered by its field
    ("h200 bandwidth", (H200,)),
    ("b200 bandwidth", ("hardware/nvidia-b200",)),
    ("mi355x bandwidth", ("hardware/amd-instinct-mi355x",)),
    ("mi300x capacity", ("hardware/amd-instinct-mi300x",)),
    ("llama 405b params", ("models/llama-3.1-405b",)),
)

FIRST = "q => { const r = kbSearch(q); return r.length ? [r[0][1].id, r[0][2]] : null; }"


@pytest.fixture(scope="module")
def tab(built_site: Path) -> Iterator[Any]:
    with chromium() as browser:
        page = browser.new_page()
        problems = watched(page)
        page.goto((built_site / "search.html").as_uri())
        yield page
        assert problems == []


def test_the_suite_is_at_least_thirty_queries() -> None:
    assert len(SUITE) >= 30 and len({q for q, _ in SUITE}) == len(SUITE)


@pytest.mark.parametrize(("query", "expected"), SUITE, ids=[q for q, _ in SUITE])
def test_the_first_result(tab: Any, query: str, expected: tuple[str, ...]) -> None:
    first = tab.evaluate(FIRST, query)
    assert first is not None, f"{query!r} found nothing"
    assert first[0] in expected, (query, first)


def test_a_field_word_answers_with_the_field(tab: Any) -> None:
    first = tab.evaluate(FIRST, "h200 bandwidth")
    assert first[1][0] == "memory.bandwidth" and first[1][3] == "4.8 TB/s", first
    figure = tab.evaluate(FIRST, "4800 GB/s")
    assert figure[1][0] == "memory.bandwidth", figure


def test_a_figure_no_record_holds_finds_nothing_by_typo(tab: Any) -> None:
    assert tab.evaluate("q => kbSearch(q).length", "4801 GB/s") == 0
    assert tab.evaluate("q => kbSearch(q).length", "3351") == 0


def test_a_model_name_is_not_read_as_bytes(tab: Any) -> None:
    first = tab.evaluate(FIRST, "70b")[0]
    assert first.startswith("models/llama-") and first.endswith("-70b"), first


def test_the_page_shows_the_answer_as_a_link_to_the_field(tab: Any, built_site: Path) -> None:
    tab.goto((built_site / "search.html").as_uri() + "?q=h200+bandwidth")
    first = tab.locator("#search-results li").first
    assert first.locator("a").first.get_attribute("href") == f"records/{H200}.html"
    answer = first.locator(".search-field a")
    assert answer.inner_text() == "memory.bandwidth: 4.8 TB/s"
    assert answer.get_attribute("href") == f"records/{H200}.html#f-memory.bandwidth"
    assert 'id="f-memory.bandwidth"' in (built_site / f"records/{H200}.html").read_text("utf-8")
