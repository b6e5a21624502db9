"""Under the suite's own pytest-xdist options every test of an `xdist_group` runs on one worker.

tests/conftest.py marks tests/install (one wheel, one venv, one pre-commit home per
worker that runs any of them), tests/equations/shipped.py marks the shipped-records
equivalence tests and tests/shipped_outputs.py the readers of the shipped rows' pricing;
tests/site/conftest.py marks the modules that read the shipped site (`built-site`); every
other test is grouped by its module (tests/conftest.py `module_group`: its module-scoped
fixtures made once a run).
`--dist loadgroup` (pyproject.toml) only honours a mark that is on the item before xdist's
worker reads it, and joins the names of two marks into a group of their own. This runs
the suite's collection under `-n 2 --dist loadgroup` with a plugin that records where each
test would run and runs nothing, and holds each group to one worker and every test to
exactly one of these groups.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests.conftest import REPO

WHERE = """
import os, pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.environ["KB_WHERE_OUT"], "a", encoding="utf-8") as out:
        out.write(f"{worker} {item.nodeid}\\n")
    return True  # recorded, not run
"""


def test_each_group_runs_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "kb_where.py").write_text(WHERE, encoding="utf-8")
    out = tmp_path / "where.txt"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
        "KB_WHERE_OUT": str(out),
    }
    # Few files, cheap to collect (each of three processes imports them): 9 tests of the
    # install group, 3 of the shipped-equations group, 1 of the shipped-outputs group (its
    # module's mark), 3 of the built-site group (tests/site/conftest.py's hook, which
    # tests/conftest.py's must not mark again: one reads `built_site`, two do not and join
    # it with their module), and the others grouped by module. xdist
    # hands out its first work one unit at a time in turn, so two tests of a group that lost
    # its mark would land on both workers; the group is the folder (tests/conftest.py), so
    # any of its files shows it.
    files = [
        "tests/install/test_documented_release.py",
        "tests/install/test_readme_setup.py",
        "tests/equations/test_plan.py",  # SHIPPED tests and tests of the module's group
        "tests/commands/test_list_end_to_end_new_kinds.py",  # a module mark
        "tests/site/test_links.py",  # built-site's: a module with a reader of repo_copy
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-p", "kb_where", "-p", "no:cacheprovider"]
        + files,  # pyproject.toml's addopts: -n auto --dist loadgroup (-n 2 here)
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    workers: dict[str, set[str]] = defaultdict(set)
    for line in out.read_text(encoding="utf-8").splitlines():
        worker, nodeid = line.split(" ", 1)
        group = nodeid.rpartition("@")[2] if "@" in nodeid else ""
        workers[group].add(worker)
    named = {"install", "shipped-equations", "shipped-outputs", "built-site"}
    modules = {"equations/test_plan.py"}
    assert set(workers) == named | modules, workers  # no test ungrouped, none in two groups
    assert all(len(ran_on) == 1 for ran_on in workers.values()), workers
