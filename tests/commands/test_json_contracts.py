"""Every `--format json` output holds to a versioned schema shipped in kb/data/output/.

issue 40 item 6: a program reading kb's JSON has a contract. Each command's JSON is
produced as a user produces it (the fixture trees, run through the `kb` command line)
and validated against its schema; a command that gains a JSON form without a schema
fails `test_every_json_output_has_a_schema`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
from jsonschema import Draft202012Validator

from kb.cli import COMMANDS, cli
from kb.equations.cache import STORE as EQUATION_STORE
from tests.commands.test_show import truth_tree
from tests.conftest import REPO, SHIPPED_RECORDS
from tests.inprocess import kb_in_process
from tests.ledger.ledger_fixtures import fixture_records, write_tree
from tests.shipped_outputs import ONE_WORKER, end_to_end_json
from tests.warm import seed

OUTPUT = REPO / "kb" / "data" / "output"

# (command, the option that picks a variant or "") -> its schema. `validate` and `rules`
# are held by tests/commands/test_output_schemas.py.
SCHEMAS = {
    ("calc", ""): "calc.v1.schema.json",
    ("diff", ""): "diff.v1.schema.json",
    ("ledger", ""): "ledger.v1.schema.json",
    ("list", ""): "list.v1.schema.json",
    ("list", "--unverified"): "figures.v1.schema.json",
    ("list", "--unvalidated"): "unvalidated.v1.schema.json",
    ("list", "--predictions"): "predictions.v1.schema.json",
    ("list", "--end-to-end"): "endtoend.v1.schema.json",
    ("plan", ""): "plan.v1.schema.json",
    ("rules", ""): "rules.v1.schema.json",
    ("show", ""): "show.v1.schema.json",
    ("validate", ""): "validate.v1.schema.json",
    ("validate", "--statistics"): "statistics.v1.schema.json",
}


def holds(name: str, instance: Any) -> None:
    document = json.loads((OUTPUT / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(document)
    errors = [
        f"{list(e.absolute_path)}: {e.message}"
        for e in Draft202012Validator(document).iter_errors(instance)
    ]
    assert not errors, errors[:5]


def json_out(cwd: Path, *args: str) -> Any:
    done = kb_in_process(list(args), cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_json_output_has_a_schema() -> None:
    """Each command whose format choices include json is listed above, its schema exists."""
    ctx = click.Context(cli)
    with_json = set()
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        for param in command.params:
            if isinstance(param.type, click.Choice) and "json" in param.type.choices:
                with_json.add(name)
    assert with_json == {command for command, _ in SCHEMAS}
    for name in SCHEMAS.values():
        assert (OUTPUT / name).is_file(), name
    assert {p.name for p in OUTPUT.glob("*.schema.json")} == set(SCHEMAS.values())


@pytest.fixture(scope="module")
def truth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return truth_tree(tmp_path_factory.mktemp("truth"))


@pytest.mark.parametrize("variant", ["", "--unverified", "--unvalidated", "--predictions"])
def test_list_json(truth: Path, variant: str) -> None:
    document = json_out(truth, "list", *([variant] if variant else []), "--format", "json")
    assert document  # something to hold to the schema
    holds(SCHEMAS[("list", variant)], document)


@ONE_WORKER
def test_end_to_end_json_on_the_shipped_records() -> None:
    """`kb list --end-to-end --format json` at the project folder (run once per worker,
    in-process, read by the other tests of its rows: tests/shipped_outputs.py)."""
    document = end_to_end_json()
    assert document["rows"] and document["summary"]["validation_rows"] > 0
    holds(SCHEMAS[("list", "--end-to-end")], document)


def test_plan_json_on_the_shipped_records(tmp_path: Path, shipped_stores: Path) -> None:
    """The claims' results and plans come from one cold check of the shipped records
    (tests/warm.py; a cold `kb plan` derives them again, ~11 CPU-s): the subject here is
    the JSON's schema, not the cold path."""
    cache = seed(shipped_stores, tmp_path / "cache", (EQUATION_STORE,))
    args = ["plan", "models/llama-3.1-70b", "--on", "hardware/nvidia-h100-sxm", "--count", "8"]
    done = kb_in_process(
        [*args, "--batch", "8", "--format", "json"],
        cwd=SHIPPED_RECORDS.parent,
        env={"KB_CACHE_DIR": str(cache)},
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["options"]
    holds(SCHEMAS[("plan", "")], document)


def test_list_json_drift_fails(truth: Path) -> None:
    document = json_out(truth, "list", "--predictions", "--format", "json")
    document["predictions"][0]["state"] = 1
    with pytest.raises(AssertionError):
        holds("predictions.v1.schema.json", document)


def test_show_json(truth: Path) -> None:
    document = json_out(truth, "show", "flops/ring", "--format", "json")
    assert document["verdict"] and document["checks"] and document["references"]
    holds("show.v1.schema.json", document)


def test_calc_json() -> None:
    args = ["calc", "flops/tp-decode-allreduce-time", "--root", str(SHIPPED_RECORDS)]
    document = json_out(REPO, *args, "--claim", "overhead-calibration", "--format", "json")
    holds("calc.v1.schema.json", document)
    document["value"]["exact"] = 70.81
    with pytest.raises(AssertionError):
        holds("calc.v1.schema.json", document)


@pytest.mark.parametrize("name", ["fixture-both-fit", "fixture-one-fits", "fixture-tp"])
def test_ledger_json(tmp_path: Path, name: str) -> None:
    root = write_tree(tmp_path, fixture_records()) / "records"
    document = json_out(
        tmp_path, "ledger", f"placements/{name}", "--format", "json", "--root", str(root)
    )
    assert document["ledgers"]
    holds("ledger.v1.schema.json", document)


def test_diff_json(tmp_path: Path) -> None:
    top = truth_tree(tmp_path / "repo")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=top, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    receipt = top / "records" / "receipts" / "ar.yaml"
    text = receipt.read_text(encoding="utf-8")
    (top / "records" / "flops" / "idle.yaml").unlink()
    receipt.write_text(text.replace("42", "60", 1), encoding="utf-8")
    done = kb_in_process(["diff", "HEAD", "--format", "json"], cwd=top)
    assert done.returncode in (0, 1), done.stderr
    document = json.loads(done.stdout)
    assert document["removed"] == ["flops/idle"] and document["changed"]
    assert document["figures"] and document["moved"] and document["findings_added"]
    holds("diff.v1.schema.json", document)
