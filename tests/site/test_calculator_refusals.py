"""The calculator refuses what the model does not cover, with kb calc's reason and digits.

The seed crossover declares `validity:` (N >= 2; B_tp at or below the ridge
batch). The page carries those conditions as checked trees and refuses as
`kb calc` does, in the same words: N = 1 (no value: N - 1 divides by zero),
N = 0 and N = -3 (outside tp-degree), a crossover above the ridge. A negative
input is refused as outside every equation (kb's symbols are positive). The
result shows kb's 4 significant digits, the trail ends as `kb calc`'s does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.site.chromium import chromium, watched
from tests.site.conftest import SEED_FLOP

pytestmark = pytest.mark.browser

BASE = {
    "BW_hbm": ["3350", "GB/s"],
    "P_layer": ["202375168", "1"],
    "W": ["450", "GB/s"],
    "c": ["2", "1"],
    "d": ["4096", "1"],
}
RIDGE = {"C": ["989", "TFLOP/s"], "f_mac": ["2", "FLOP"], "s_elem": ["2", "B"]}


@pytest.fixture(scope="module")
def tab(built_site: Path) -> Iterator[Any]:
    with chromium() as browser:
        page = browser.new_page()
        problems = watched(page)
        page.goto((built_site / "records" / f"{SEED_FLOP}.html").as_uri())
        yield page
        assert problems == []


def _page(tab: Any, **given: list[str]) -> dict[str, Any]:
    return tab.evaluate(  # type: ignore[no-any-return]
        "([t, g]) => kbCalc.evaluate(t, g)", ["b_star_tp", {**BASE, **given}]
    )


def _cli(repo_copy: Path, **given: list[str]) -> tuple[int, str]:
    """`kb calc` in this process (its command line through click; a subprocess would only add
    an interpreter's start): the exit code and what it printed, stdout then stderr."""
    from kb.cli import cli

    sets = [f"{name}={text} {unit}".strip() for name, (text, unit) in {**BASE, **given}.items()]
    run = CliRunner().invoke(
        cli,
        ["calc", SEED_FLOP, "b_star_tp", "--root", str(repo_copy / "records"),
         *(a for s in sets for a in ("--set", s))],
    )  # fmt: skip
    assert run.exception is None or isinstance(run.exception, SystemExit), run.exception
    return run.exit_code, (run.stdout + run.stderr).strip()


def test_a_covered_input_shows_kb_calcs_digits_and_trail(tab: Any, repo_copy: Path) -> None:
    got = _page(tab, N=["8", "1"])
    assert got["shown"] == "237" and got["exact"] == "111168/469"
    code, printed = _cli(repo_copy, N=["8", "1"])
    assert code == 0
    assert printed.splitlines()[-1] == got["trail"][-1] == "B_tp = 237 (exact 111168/469)"
    assert "  validity tp-degree holds" in got["trail"]
    assert "  validity below-ridge not checked: C, f_mac, s_elem not set" in got["trail"]


@pytest.mark.parametrize("n", ["0", "-3"])
def test_n_below_two_is_refused_in_kb_calcs_words(tab: Any, repo_copy: Path, n: str) -> None:
    got = _page(tab, N=[n, "1"])
    code, printed = _cli(repo_copy, N=[n, "1"])
    assert code == 1
    assert "outside validity tp-degree" in got["error"]
    assert printed == "kb calc: " + got["error"]


def test_n_of_one_has_no_value_and_says_why(tab: Any) -> None:
    got = _page(tab, N=["1", "1"])
    assert got["error"].startswith("outside validity tp-degree: N = 1, needs >= 2;")
    assert "division by zero" in got["error"]


def test_above_the_ridge_is_refused_when_the_ridge_is_known(tab: Any, repo_copy: Path) -> None:
    over = {"N": ["2", "1"], "W": ["9000", "GB/s"], **RIDGE}
    got = _page(tab, **over)
    code, printed = _cli(repo_copy, **over)
    assert code == 1 and "outside validity below-ridge" in got["error"]
    assert printed == "kb calc: " + got["error"]
    inside = _page(tab, N=["8", "1"], **RIDGE)
    assert "  validity below-ridge holds" in inside["trail"]


def test_a_negative_input_is_refused(tab: Any) -> None:
    got = _page(tab, N=["8", "1"], W=["-450", "GB/s"])
    assert got["error"].startswith("W = -450 GB/s: negative;")


def test_the_form_shows_the_refusal_and_its_reason(tab: Any) -> None:
    tab.select_option("#calc-target", "b_star_tp")
    tab.fill("#calc-N-v", "1")
    result = tab.locator(".calc-result")
    assert result.inner_text().startswith("Not computed: outside validity tp-degree")
    assert "calc-refused" in (result.get_attribute("class") or "")
    assert "refused: outside validity tp-degree" in tab.locator(".calc-trail").inner_text()
    tab.fill("#calc-N-v", "8")
    assert "Not computed" not in result.inner_text()
