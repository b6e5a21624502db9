"""`kb validate`'s output for people and CI: errors first, warnings capped per code, ruff's flags.

A tree with one error and 2,000 warnings (written to a temporary folder) must show the
error in the first lines and fit a screen; `--statistics`, `--quiet`, `--exit-zero` and
`--output-format` behave as ruff's; the program formats keep every finding.

The commands run in-process (tests/inprocess.py: the same exit code, stdout and stderr,
without a new interpreter per call); the first test runs the real console script once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import link_yaml, run_kb, source_yaml, write_tree
from tests.inprocess import kb_in_process

NOISY_FILES, NUMBERS_PER_FILE = 20, 100  # 2,000 PR003 warnings
BROKEN = "records/interconnects/link.yaml"

LINK = link_yaml("basis: derived, source: sources/nowhere")


def noisy_notes() -> str:
    """A `notes:` value with NUMBERS_PER_FILE bare numbers in prose (one PR003 each)."""
    words = " ".join(f"about {n + 11} units," for n in range(NUMBERS_PER_FILE))
    return f'"{words}"'


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1 error (a dangling source, RF001) and 2,000 warnings (PR003)."""
    top = tmp_path_factory.mktemp("noisy")
    files = {
        f"sources/doc-{i:02}.yaml": source_yaml(f"sources/doc-{i:02}", notes=noisy_notes())
        for i in range(NOISY_FILES)
    }
    files["interconnects/link.yaml"] = LINK
    write_tree(top / "records", files)
    return top


def kb(cwd: Path, *args: str) -> tuple[int, str, str]:
    done = kb_in_process(["validate", *args], cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def test_the_fixture_has_one_error_and_2000_warnings(noisy: Path) -> None:
    """The real console script, in its own process (the other tests run kb in-process)."""
    done = run_kb(["validate", "--output-format", "json"], cwd=noisy)
    code, out = done.returncode, done.stdout
    summary = json.loads(out)["summary"]
    assert (code, summary["error"], summary["warning"]) == (1, 1, 2000)


def test_by_default_the_error_comes_first_and_the_report_fits_a_screen(noisy: Path) -> None:
    code, out, _ = kb(noisy)
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith(f"{BROKEN}:11:") and " RF001 " in lines[0]
    assert len(lines) <= 40, out
    assert "1997 more PR003 (prose-number-unbound) warnings not shown" in out
    assert lines[-1] == "checked 21 records: 1 error, 2000 warnings in 21 files"


def test_max_per_code_0_shows_every_finding(noisy: Path) -> None:
    _, out, _ = kb(noisy, "--max-per-code", "0", "--output-format", "concise")
    assert sum(" PR003 " in line for line in out.splitlines()) == 2000


def test_concise_is_one_line_per_finding_without_hints(noisy: Path) -> None:
    _, out, _ = kb(noisy, "--output-format", "concise")
    lines = out.splitlines()
    assert lines[0].startswith(f"{BROKEN}:11:")
    assert not any(line.startswith("    hint:") for line in lines)
    assert [" PR003 " in line for line in lines[1:4]] == [True] * 3


def test_statistics_prints_counts_per_code_only(noisy: Path) -> None:
    code, out, _ = kb(noisy, "--statistics")
    assert code == 1  # as ruff: the exit code still says findings fail the run
    assert out.splitlines() == [
        "2000\tPR003\tprose-number-unbound [warning]",
        "   1\tRF001\tdangling-reference",
    ]


def test_statistics_as_json(noisy: Path) -> None:
    _, out, _ = kb(noisy, "--statistics", "--output-format", "json")
    assert json.loads(out) == [
        {"code": "PR003", "name": "prose-number-unbound", "severity": "warning", "count": 2000},
        {"code": "RF001", "name": "dangling-reference", "severity": "error", "count": 1},
    ]


def test_quiet_prints_only_what_fails_the_run(noisy: Path) -> None:
    code, out, err = kb(noisy, "--quiet")
    assert code == 1 and err == ""
    assert out.splitlines()[0].startswith(f"{BROKEN}:11:")
    assert "PR003" not in out and "checked" not in out
    assert len(out.splitlines()) == 2  # the finding and its hint


def test_quiet_with_fail_on_warning_shows_every_warning(noisy: Path) -> None:
    _, out, _ = kb(noisy, "-q", "--fail-on", "warning", "--output-format", "concise")
    assert len(out.splitlines()) == 2001


def test_quiet_on_a_clean_run_prints_nothing(noisy: Path) -> None:
    code, out, _ = kb(noisy, "-q", "--ignore", "RF001")
    assert (code, out) == (0, "")


def test_exit_zero(noisy: Path) -> None:
    code, out, _ = kb(noisy, "--exit-zero")
    assert code == 0 and " RF001 " in out.splitlines()[0]


def test_json_and_sarif_keep_every_finding(noisy: Path) -> None:
    _, out, _ = kb(noisy, "--format", "json")
    assert len(json.loads(out)["findings"]) == 2001
    _, out, _ = kb(noisy, "--output-format", "sarif")
    assert len(json.loads(out)["runs"][0]["results"]) == 2001


def test_github_annotations_keep_every_finding_errors_first(noisy: Path) -> None:
    _, out, _ = kb(noisy, "--output-format", "github")
    lines = out.splitlines()
    assert len(lines) == 2001
    assert lines[0].startswith(f"::error file={BROKEN},line=11,")
    assert all(line.startswith("::warning ") for line in lines[1:])


def test_format_text_is_full_and_a_disagreeing_pair_is_a_usage_error(noisy: Path) -> None:
    assert kb(noisy, "--format", "text")[1] == kb(noisy, "--output-format", "full")[1]
    code, out, err = kb(noisy, "--format", "json", "--output-format", "concise")
    assert code == 2 and out == ""
    assert "--format json and --output-format concise disagree" in err


def test_statistics_cannot_be_sarif(noisy: Path) -> None:
    code, _, err = kb(noisy, "--statistics", "--output-format", "sarif")
    assert code == 2 and "--statistics prints counts as text or json" in err
