"""States a reader cannot mistake, read as the browser paints them (computed colours).

Only `validated` (a prediction held to a measurement within its band) is green;
`recomputed` (arithmetic) is neutral and says so in words; a contradicted
prediction, even one the record accepts, is red with its error and its reason.
Built from tests/fixtures/truth (fixture figures, not measurements).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.site.chromium import chromium
from tests.site.test_truth_pages import build_truth

pytestmark = pytest.mark.browser

ACCEPTED = {
    "receipts/ar.yaml": ("latency: {value: 42, unit: us", "latency: {value: 60, unit: us"),
    "flops/ring.yaml": (
        "    band: {rel: 0.25}\n",
        "    band: {rel: 0.25}\n    accepted: {reason: no launch term}\n",
    ),
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as instance:
        yield instance


def _colour(page: Any, selector: str) -> str:
    return str(page.eval_on_selector(selector, "e => getComputedStyle(e).color"))


def _palette(page: Any, name: str) -> str:
    """A theme colour as the browser computes it (a probe element painted with it)."""
    return str(
        page.evaluate(
            """name => {
                const probe = document.createElement('span');
                probe.style.color = `var(${name})`;
                document.body.appendChild(probe);
                const colour = getComputedStyle(probe).color;
                probe.remove();
                return colour;
            }""",
            name,
        )
    )


def test_recomputed_is_neutral_and_validated_is_green(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    page = browser.new_page()
    page.goto((build_truth(tmp_path) / "records" / "flops" / "ring.html").as_uri())
    green, red = _palette(page, "--measured"), _palette(page, "--unverified")
    validated = _colour(page, "#claim-t-1mib-measured .state-validated")
    recomputed = _colour(page, "#claim-t-1mib .state-recomputed")
    assert validated == green
    assert recomputed not in (green, red), recomputed
    assert recomputed != validated
    words = page.inner_text("#claim-t-1mib .state-words")
    assert "not measured" in words
    page.close()


def test_an_accepted_contradiction_is_red_with_its_error_and_reason(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    page = browser.new_page()
    page.goto((build_truth(tmp_path, ACCEPTED) / "records" / "flops" / "ring.html").as_uri())
    red = _palette(page, "--unverified")
    row = "table.predictions tr.miss"
    assert page.inner_text(f"{row} td.error") == "-36.1%"
    assert _colour(page, f"{row} .state-contradicted") == red
    assert _colour(page, f"{row} td.error") == red
    assert _colour(page, f"{row} .accepted") == red
    assert "no launch term" in page.inner_text(f"{row} .accepted")
    assert _colour(page, "#verdict") == red  # the record's verdict: any contradiction is red
    page.close()
