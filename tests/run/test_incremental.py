"""kb.incremental: re-checking only what a change reaches gives exactly a full run's findings."""

from __future__ import annotations

import os
import random
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kb import api, incremental, snapshot
from kb.api import validate
from kb.findings import Finding
from kb.model import FOLDER_BY_KIND
from kb.run import RunStats
from kb.store import shard_file
from tests.conftest import SHIPPED_RECORDS
from tests.inprocess import kb_in_process
from tests.small_tree import FULL, copy_sample
from tests.warm import seed as seed_stores


def snapshot_path(directory: Path) -> Path:
    """The snapshot's file: its store's one shard (kb.snapshot keeps it in kb.store)."""
    return directory / shard_file(snapshot.STORE, 0, 1)


NUMBER = re.compile(r"(value: )(\d+(?:\.\d+)?)")
RECORD_ID = re.compile(
    r"\b(?:hardware|interconnects|models|sources|placements|strategies)/[a-z0-9._-]+"
)


def as_rows(findings: list[Finding]) -> list[tuple[object, ...]]:
    return [(f.code, f.severity.value, f.location, f.message, f.hint, f.related) for f in findings]


# The shipped records the tests below name beyond the sample (tests/small_tree.py): each
# comes with its closure, so the tree stays closed and checks clean.
NAMED = ("sources/apxml-llama-3.1-405b",)


WORK = "incremental-work"  # the one working directory of this module's tests, per worker
FIRST: dict[str, list[tuple[object, ...]]] = {}  # each template's findings (`templates`)


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory, shipped_stores: Path) -> dict[str, Path]:
    """The two trees below (`tree`'s and `edited_tree`'s), each with both caches warm.

    The record store's entries belong to one records root (kb.store.root_salt: its real
    path), so a tree copied to a new folder per test would pay a cold check of every
    record twice per test (its run and the reference's). Instead every test of a worker
    works in one folder (`work`), restored from these copies: records as
    tests/small_tree.py cuts them, and a `.kb-cache` that one run left there (from the
    stores of one cold run of the shipped records, tests/warm.py, so no claim is derived
    again) with a copy of it as the `reference-cache` (a second run of the same files at
    the same root would leave the same stores), never a run snapshot (`remember=False`):
    the first run of each test is a full run, as a user's later run is.
    """
    base = tmp_path_factory.getbasetemp()
    work = base / WORK
    made: dict[str, Path] = {}
    for name, named in (("tree", NAMED), ("edited", ())):
        shutil.rmtree(work, ignore_errors=True)
        if FULL:
            shutil.copytree(SHIPPED_RECORDS, work / "records")
        else:
            copy_sample(work / "records", named)
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(work)
            patch.setenv("KB_CACHE_DIR", str(seed_stores(shipped_stores, work / ".kb-cache")))
            made_by = validate(Path("records"), remember=False)
        FIRST[name] = as_rows(made_by.findings)  # a full run of the template, at `work`
        # the reference's cache: what the same run on the same files (the same root) leaves
        shutil.copytree(work / ".kb-cache", work / "reference-cache")
        assert not snapshot_path(work / ".kb-cache").exists()  # the first run stays full
        made[name] = work.rename(base / f"incremental-template-{name}")
    return made


@pytest.fixture
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The working directory of a test below: the worker's one folder, emptied (`templates`)."""
    path = tmp_path_factory.getbasetemp() / WORK
    shutil.rmtree(path, ignore_errors=True)
    return path


def restore(template: Path, work: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(template, work, symlinks=True)
    monkeypatch.chdir(work)
    return Path("records")


@pytest.fixture
def tree(work: Path, monkeypatch: pytest.MonkeyPatch, templates: dict[str, Path]) -> Path:
    """The small sample of the shipped records (tests/small_tree.py) with the records the
    tests name (`NAMED`); the whole shipped tree with KB_FULL=1. The working directory is
    its parent, `work`.

    Each test below makes one edit and holds that the incremental run equals a full run,
    plus what that edit must change: properties of how a change reaches what depends on
    it, which the sample shows with every folder and every kind of reference of the
    shipped tree (tests/records/test_small_tree.py holds that premise), at under half
    the records. Both caches (the run's `.kb-cache` and the reference's) start warm for
    this tree (`templates`), with no snapshot: every run here is a user's later run, the
    first one full.
    """
    return restore(templates["tree"], work, monkeypatch)


@pytest.fixture
def edited_tree(work: Path, monkeypatch: pytest.MonkeyPatch, templates: dict[str, Path]) -> Path:
    """`tree` for the random edits: the small sample of the shipped records (tests/small_tree.py),
    the whole shipped tree with KB_FULL=1; both caches warm as `tree`'s."""
    return restore(templates["edited"], work, monkeypatch)


def full_run(work: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[Finding]]:
    """The reference: kb.checker on everything, with a cache of its own."""

    def run() -> list[Finding]:
        return full_result(work, monkeypatch)[0]

    return run


def full_result(work: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Finding], list[str]]:
    """The findings and checked paths of kb.checker on everything, with a cache of its own."""
    with monkeypatch.context() as patch:
        patch.setenv("KB_CACHE_DIR", str(work / "reference-cache"))
        result = validate(Path("records"), remember=False)
        return result.findings, result.checked_paths


LAST: list[RunStats] = []  # the stats of the last api.validate these tests ran


def _validate(root: Path, *args: object, **options: object) -> api.Result:
    result = api.validate(root, *args, **options)  # type: ignore[arg-type]
    LAST[:] = [result.stats]
    return result


def stats() -> RunStats:
    return LAST[-1]


def incremental_run(root: Path, **options: object) -> list[Finding]:
    return _validate(root, **options).findings


# ------------------------------------------------------------------ random edits


def _files(root: Path, folders: tuple[str, ...] = ()) -> list[Path]:
    """The record files an edit may pick (not a symlink whose target an earlier edit moved)."""
    return sorted(
        p for p in root.rglob("*.yaml") if p.is_file() and (not folders or p.parent.name in folders)
    )


def scale_a_figure(root: Path, rng: random.Random) -> str:
    path = rng.choice(_files(root, ("hardware", "interconnects", "models", "receipts")))
    text = path.read_text()
    matches = list(NUMBER.finditer(text))
    if not matches:
        return "nothing"
    match = rng.choice(matches)
    scaled = float(match.group(2)) * rng.choice((0.5, 0.999, 2, 10))
    path.write_text(text[: match.start(2)] + f"{scaled:g}" + text[match.end(2) :])
    return f"scaled a figure in {path}"


def retarget_a_reference(root: Path, rng: random.Random) -> str:
    path = rng.choice(_files(root))
    text = path.read_text()
    matches = list(RECORD_ID.finditer(text))
    if not matches:
        return "nothing"
    match = rng.choice(matches)
    path.write_text(text[: match.start()] + match.group() + "-gone" + text[match.end() :])
    return f"broke a reference in {path}"


def delete_a_record(root: Path, rng: random.Random) -> str:
    path = rng.choice(_files(root))
    path.unlink()
    return f"deleted {path}"


def copy_a_record(root: Path, rng: random.Random) -> str:
    path = rng.choice(_files(root))
    shutil.copy(path, path.with_name(path.stem + "-copy.yaml"))  # same id: ID001, ID003
    return f"copied {path}"


def break_the_yaml(root: Path, rng: random.Random) -> str:
    path = rng.choice(_files(root))
    path.write_text(path.read_text() + "\nbroken: [unclosed\n")
    return f"broke the YAML of {path}"


def shift_the_lines(root: Path, rng: random.Random) -> str:
    path = rng.choice(_files(root, ("hardware", "interconnects", "models", "sources")))
    path.write_text("# a comment\n# and another\n" + path.read_text())
    return f"shifted the lines of {path}"


def restore_a_record(root: Path, rng: random.Random) -> str:
    path = SHIPPED_RECORDS / rng.choice(
        sorted(str(p.relative_to(SHIPPED_RECORDS)) for p in SHIPPED_RECORDS.rglob("*.yaml"))
    )
    target = root / path.relative_to(SHIPPED_RECORDS)
    shutil.copy(path, target)
    return f"restored {target}"


def symlink_a_record(root: Path, rng: random.Random) -> str:
    path = rng.choice(_files(root))
    link = path.with_name(path.stem + "-link.yaml")
    if not link.exists() and not link.is_symlink():
        link.symlink_to(path.name)  # the same file twice: ID003 on one of them
    return f"symlinked {link} to {path.name}"


def rename_a_record(root: Path, rng: random.Random) -> str:
    path = rng.choice(_files(root))
    target = path.with_name(path.stem + "-renamed.yaml")
    path.rename(target)  # the id no longer matches the path, referrers dangle
    return f"renamed {path} to {target.name}"


def swap_the_kind(root: Path, rng: random.Random) -> str:
    path = rng.choice(_files(root))
    folder = rng.choice([f for f in sorted(FOLDER_BY_KIND.values()) if f != path.parent.name])
    target = root / folder / path.name
    if target.exists() or target.is_symlink():
        return "nothing"
    path.rename(target)  # a file in the wrong folder: its kind is the folder's
    return f"moved {path} to {folder}/"


def copy_with_its_id(root: Path, rng: random.Random) -> str:
    path = rng.choice(_files(root))
    folder = rng.choice(sorted(FOLDER_BY_KIND.values()))
    target = root / folder / ("zz-" + path.name)
    shutil.copy(path, target)  # claims the original's id from another name (and folder)
    return f"copied {path} to {target} (same id)"


def keep_size_and_mtime(root: Path, rng: random.Random) -> str:
    """A digit changed in place, the modification time put back: only the ctime moves."""
    path = rng.choice(_files(root, ("hardware", "interconnects", "models", "receipts")))
    before, text = os.stat(path), path.read_text()
    digits = [m.start(2) for m in NUMBER.finditer(text)]
    if not digits:
        return "nothing"
    at = rng.choice(digits)
    digit = str((int(text[at]) + rng.randint(1, 9)) % 10)
    path.write_text(text[:at] + digit + text[at + 1 :])
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    return f"changed a digit of {path}, same size and mtime"


def retarget_a_symlink(root: Path, rng: random.Random) -> str:
    """A symlink moved between two files with the same bytes: its record id changes."""
    path = rng.choice([p for p in _files(root) if not p.is_symlink()])
    twin, link = path.with_name(path.stem + "-twin.yaml"), path.with_name(path.stem + "-ln.yaml")
    if not twin.exists():
        shutil.copy(path, twin)
    target = twin.name if link.is_symlink() and os.readlink(link) == path.name else path.name
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    return f"pointed {link} at {target}"


EDITS = (
    keep_size_and_mtime,
    retarget_a_symlink,
    scale_a_figure,
    retarget_a_reference,
    delete_a_record,
    copy_a_record,
    break_the_yaml,
    shift_the_lines,
    restore_a_record,
    symlink_a_record,
    rename_a_record,
    swap_the_kind,
    copy_with_its_id,
)
# KB_DIFFERENTIAL_EDITS=500 (or more) for a long local run; the default suite makes 4 x 6.
EDITS_PER_SEED = max(1, int(os.environ.get("KB_DIFFERENTIAL_EDITS", "24")) // 4)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_edits_give_the_findings_of_a_full_run(
    edited_tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Seed 4 waits out a short margin before each run: every edit meets trusted stats.

    Per push the edits are made on a sample of the shipped records (tests/small_tree.py: a
    record of every folder with its references, and every kind of reference the shipped tree
    makes, held by tests/records/test_small_tree.py); incremental = full is a property of
    any tree, so the sample tests it with every dependency the shipped tree has, at a quarter
    of the cost of each run. KB_FULL=1 edits the whole shipped tree.

    A failure names the seed, the edits up to the one that diverged and the first
    differing findings (made only then: a passing run pays nothing for it).
    """
    pause = 0.15 if seed == 4 else 0.0
    if pause:
        monkeypatch.setattr(snapshot, "MARGIN_NS", 100_000_000)  # > this kernel's clock tick
        time.sleep(pause)
    rng = random.Random(seed)
    tree = edited_tree
    # the first run is full (no snapshot): the findings of the full run that made the
    # template, on the same files at the same root (`templates`), computed once per worker
    assert as_rows(incremental_run(tree)) == FIRST["edited"]
    assert stats().mode == "full"
    counts = {"edits": 0, "incremental": 0, "snapshot": 0}
    history: list[str] = []
    for _ in range(EDITS_PER_SEED):
        edit = rng.choice(EDITS)
        history.append(f"{edit.__name__}: {edit(tree, rng)}")
        time.sleep(pause)
        result = _validate(tree)
        findings, checked = full_result(work, monkeypatch)
        counts["edits"] += 1
        counts[stats().mode] = counts.get(stats().mode, 0) + 1
        if as_rows(result.findings) != as_rows(findings) or result.checked_paths != checked:
            pytest.fail(divergence(seed, history, result, findings, checked), pytrace=False)
        assert stats().mode in ("incremental", "snapshot"), history[-1]
    print(f"seed {seed}: {counts}")  # pytest -s shows the campaign's counts


def divergence(
    seed: int, history: list[str], result: api.Result, findings: list[Finding], checked: list[str]
) -> str:
    """Where an incremental run first differed from a full one, and the edits that led there."""
    mine, theirs = as_rows(result.findings), as_rows(findings)
    lines = [
        f"seed {seed}, edit {len(history)} of {EDITS_PER_SEED} (KB_DIFFERENTIAL_EDITS="
        f"{EDITS_PER_SEED * 4}): the {stats().mode} run differs from a full run",
        "edits:",
        *(f"  {index}. {done}" for index, done in enumerate(history, 1)),
    ]
    for label, rows, other in (("only incremental", mine, theirs), ("only full", theirs, mine)):
        extra = [row for row in rows if row not in other]
        lines += [f"{label} ({len(extra)}):", *(f"  {row}" for row in extra[:5])]
    if result.checked_paths != checked:
        gone = sorted(set(checked) - set(result.checked_paths))[:5]
        added = sorted(set(result.checked_paths) - set(checked))[:5]
        lines.append(f"checked paths: only full {gone}, only incremental {added}")
    return "\n".join(lines)


# ------------------------------------------------------------------ issue 15 regressions


def assert_incremental_is_full(work: Path, monkeypatch: pytest.MonkeyPatch) -> list[Finding]:
    result = _validate(Path("records"))
    assert stats().mode == "incremental"
    findings, checked = full_result(work, monkeypatch)
    assert as_rows(result.findings) == as_rows(findings)
    assert result.checked_paths == checked
    forced = _validate(Path("records"), full=True)
    assert as_rows(forced.findings) == as_rows(findings)
    assert forced.checked_paths == checked
    return result.findings


def test_a_record_duplicated_through_a_symlink_is_id003_as_in_a_full_run(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    incremental_run(tree)
    (tree / "hardware" / "h100-link.yaml").symlink_to("nvidia-h100-sxm.yaml")
    found = assert_incremental_is_full(work, monkeypatch)
    assert [f.code for f in found if f.severity.value == "error"] == ["ID003"]
    assert _validate(tree).checked_paths == full_result(work, monkeypatch)[1]
    assert stats().mode == "snapshot"  # and the snapshot now knows the link


def test_id003_is_kept_when_its_record_is_rechecked_for_another_reason(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy reaches a source the original does not: a change there re-checks the copy only."""
    source = tree / "sources" / "apxml-llama-3.1-405b.yaml"
    new = tree / "sources" / "zz-new.yaml"
    new.write_text(source.read_text().replace("sources/apxml-llama-3.1-405b", "sources/zz-new"))
    original = (tree / "hardware" / "nvidia-h100-sxm.yaml").read_text()
    copy = re.sub(r"source: sources/[a-z0-9.-]+", "source: sources/zz-new", original, count=1)
    (tree / "hardware" / "zz-h100-copy.yaml").write_text(copy)  # claims the original's id
    incremental_run(tree)
    new.write_text(re.sub(r"(?m)^title: .*$", 'title: "changed"', new.read_text()))
    found = assert_incremental_is_full(work, monkeypatch)
    assert ("ID003", "records/hardware/zz-h100-copy.yaml") in {
        (f.code, f.location.path) for f in found
    }


def test_claims_in_a_folder_whose_kind_has_none_are_tracked(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flop class under sources/: its schema has no claims, the engine still checks them."""
    (tree / "flops" / "decode-kv-cache-read.yaml").rename(
        tree / "sources" / "decode-kv-cache-read.yaml"
    )
    before = incremental_run(tree)
    model = tree / "models" / "llama-3.1-70b.yaml"
    model.write_text(model.read_text().replace("  heads: 64\n", "  heads: 649\n", 1))
    found = assert_incremental_is_full(work, monkeypatch)
    moved = "records/sources/decode-kv-cache-read.yaml"
    eq_before = {f.message for f in before if f.location.path == moved and f.code.startswith("EQ")}
    eq_after = {f.message for f in found if f.location.path == moved and f.code.startswith("EQ")}
    assert eq_after != eq_before  # the change reached the claims: not lost, not stale


def test_a_hot_record_rechecks_its_dependants_and_no_more(tree: Path) -> None:
    incremental_run(tree)
    assert stats().mode == "full"
    incremental_run(tree)
    assert (stats().mode, stats().rechecked, stats().loaded) == ("snapshot", 0, 0)
    path = tree / "hardware" / "nvidia-h100-sxm.yaml"
    path.write_text(path.read_text() + "# touched\n")
    incremental_run(tree)
    total = len(list(tree.rglob("*.yaml")))
    assert stats().mode == "incremental"
    assert 1 < stats().rechecked < stats().loaded < total  # type: ignore[operator]


def test_a_placement_sees_a_changed_receipt_on_its_link(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger finds receipts by interconnect, not by reference: still re-checked."""
    before = incremental_run(tree)
    for receipt in _files(tree, ("receipts",)):
        text = receipt.read_text()
        receipt.write_text(NUMBER.sub(lambda m: f"{m.group(1)}{float(m.group(2)) * 1000:g}", text))
    found = incremental_run(tree)
    assert as_rows(found) == as_rows(full_run(work, monkeypatch)())
    new = {(f.code, f.location.path) for f in found} - {(f.code, f.location.path) for f in before}
    assert any(path.startswith("records/placements/") for _, path in new), new  # it reached one


def test_a_changed_figure_re_checks_the_prose_that_templates_it(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GB200 copy receipt's summary templates another receipt it names nowhere else."""
    incremental_run(tree)
    target = tree / "receipts" / "stas00-h200-nvbandwidth.yaml"
    text = target.read_text()
    target.write_text(
        text.replace("gpus: 1, value: {value: 55.43,", "gpus: 1, rate: {value: 55.43,", 1)
    )
    found = incremental_run(tree)
    assert stats().mode == "incremental"
    assert as_rows(found) == as_rows(full_run(work, monkeypatch)())
    citing = "records/receipts/azure-nd-gb200-v6-host-device-copy.yaml"
    assert [
        (f.code, f.location.line) for f in found if f.location.path == citing and f.code != "PR003"
    ] == [("PR001", 11)]


def test_a_changed_measurement_rechecks_the_prediction_that_names_it(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`measured: receipts/<id>#...` is a reference: editing the receipt re-checks the model."""
    truth = Path(__file__).resolve().parents[1] / "fixtures" / "truth"
    for folder in ("flops", "receipts"):
        for path in (truth / folder).glob("*.yaml"):
            shutil.copy(path, tree / folder / path.name)
    shutil.copy(truth / "sources" / "doc.yaml", tree / "sources" / "truth-doc.yaml")
    for path in (
        tree / "flops" / "ring.yaml",
        tree / "flops" / "idle.yaml",
        tree / "receipts" / "ar.yaml",
        tree / "sources" / "truth-doc.yaml",
    ):
        path.write_text(path.read_text().replace("sources/doc", "sources/truth-doc"))
    assert as_rows(incremental_run(tree)) == as_rows(full_run(work, monkeypatch)())
    receipt = tree / "receipts" / "ar.yaml"
    receipt.write_text(receipt.read_text().replace("{value: 42, unit: us", "{value: 60, unit: us"))
    found = incremental_run(tree)
    assert stats().mode == "incremental"
    assert [f.code for f in found if f.location.path.endswith("flops/ring.yaml")] == ["EQ018"]
    assert as_rows(found) == as_rows(full_run(work, monkeypatch)())


def test_editing_a_used_equation_rechecks_the_record_that_uses_it(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`equations: {read: {uses: flops/compose-read#step}}` is a reference: the user follows."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "compose"
    for path in fixtures.rglob("*.yaml"):
        shutil.copy(path, tree / path.relative_to(fixtures))
    assert as_rows(incremental_run(tree)) == as_rows(full_run(work, monkeypatch)())
    used = tree / "flops" / "compose-read.yaml"
    used.write_text(used.read_text().replace("P*b_w/(N*BW_hbm)", "P*b_w/BW_hbm"))
    found = incremental_run(tree)
    assert stats().mode == "incremental"
    assert [f.code for f in found if f.location.path.endswith("flops/compose-tp.yaml")] == ["EQ007"]
    assert as_rows(found) == as_rows(full_run(work, monkeypatch)())


def test_scope_of_paths_matches_the_checker(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tree / "hardware" / "nvidia-h100-sxm.yaml"
    target.write_text(target.read_text().replace("version: ", "version: 9\nx_version: ", 1))
    incremental_run(tree)
    result = _validate(tree, [target])
    with monkeypatch.context() as patch:
        patch.setenv("KB_CACHE_DIR", str(work / "reference-cache"))
        expected = validate(tree, [target], remember=False)
    assert as_rows(result.findings) == as_rows(expected.findings)
    assert result.checked_paths == expected.checked_paths
    assert len(result.checked_paths) > 1  # the file and the records that reference it


def test_full_ignores_the_snapshot_and_a_corrupt_one_is_not_trusted(tree: Path) -> None:
    incremental_run(tree)
    incremental_run(tree, full=True)
    assert stats().mode == "full"
    snapshot = snapshot_path(Path(".kb-cache"))
    snapshot.write_bytes(snapshot.read_bytes()[:100])
    incremental_run(tree)
    assert stats().mode == "full"


def test_another_working_directory_is_a_full_run(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same records and the same cache folder, which holds the snapshot the first run
    left: from another working directory (findings print other paths) it is not used."""
    broken = tree / "sources" / "azure-nd-gb200-v6-results.yaml"
    broken.write_text(broken.read_text() + "\nbroken: [unclosed\n")  # a finding to print
    assert any(
        f.location.path == f"records/{broken.relative_to(tree)}" for f in incremental_run(tree)
    )
    assert snapshot_path(work / ".kb-cache").is_file()
    monkeypatch.setenv("KB_CACHE_DIR", str(work / ".kb-cache"))  # not records/.kb-cache
    monkeypatch.chdir("records")
    findings = incremental_run(Path("."))
    assert stats().mode == "full"
    assert any(f.location.path == str(broken.relative_to(tree)) for f in findings)
    assert all(not f.location.path.startswith("records/") for f in findings)


def test_the_command_line_uses_it_and_full_is_an_option(tree: Path, work: Path) -> None:
    """`kb validate` as typed, run in this process (tests/inprocess.py: the command's own
    code, output and exit code; tests/commands/test_cli.py holds the real entry point)."""
    first = kb_in_process(["validate"], work)
    second = kb_in_process(["validate"], work)
    forced = kb_in_process(["validate", "--full"], work)
    assert first.returncode == second.returncode == forced.returncode == 0, first.stdout
    assert first.stdout == second.stdout == forced.stdout
    assert snapshot_path(work / ".kb-cache").is_file()


# ------------------------------------------------------------------ a file that does not load

# A record file kb cannot read (here: broken YAML) still names a record of the tree: a
# reference to it is not dangling (kb.checker), and its id comes and goes with the file.
RESULTS = "sources/azure-nd-gb200-v6-results"
CITING = "records/receipts/azure-nd-gb200-v6-host-device-copy.yaml"  # cites RESULTS


def dangling_at(found: list[Finding], path: str) -> list[str]:
    return [f.message for f in found if f.code == "RF001" and f.location.path == path]


def test_deleting_a_record_that_does_not_load_rechecks_its_referrers(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shrunk from seed 1's edit 118 of KB_DIFFERENTIAL_EDITS=510 (break, later delete)."""
    source = tree / "sources" / "azure-nd-gb200-v6-results.yaml"
    source.write_text(source.read_text() + "\nbroken: [unclosed\n")
    assert dangling_at(incremental_run(tree), CITING) == []  # unreadable, but there
    source.unlink()
    found = assert_incremental_is_full(work, monkeypatch)
    assert f"{RESULTS!r} names no record" in dangling_at(found, CITING)


def test_a_record_that_does_not_load_at_a_dangling_id_rechecks_its_referrers(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tree / "sources" / "azure-nd-gb200-v6-results.yaml"
    source.rename(source.with_name("moved.yaml"))
    assert dangling_at(incremental_run(tree), CITING)
    source.write_text("broken: [unclosed\n")  # the id is back, in a file kb cannot read
    found = assert_incremental_is_full(work, monkeypatch)
    assert dangling_at(found, CITING) == []


def test_a_suggested_id_that_goes_with_a_file_that_does_not_load_is_not_suggested(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RF001's "did you mean" names any id of the tree, unreadable records' too."""
    typo = tree / "hardware" / "nvidia-h100-sxm.yaml"
    text = typo.read_text()
    typo.write_text(re.sub(r"source: sources/[a-z0-9.-]+", f"source: {RESULTS}z", text, count=1))
    source = tree / "sources" / "azure-nd-gb200-v6-results.yaml"
    source.write_text(source.read_text() + "\nbroken: [unclosed\n")
    hints = [f.hint for f in incremental_run(tree) if f.code == "RF001"]
    assert hints == [f"did you mean {RESULTS!r}?"]
    source.unlink()
    found = assert_incremental_is_full(work, monkeypatch)
    assert f"did you mean {RESULTS!r}?" not in [f.hint for f in found if f.code == "RF001"]


# ------------------------------------------------------------------ issue 18: the stat check


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file kb.incremental reads and hashes to compare with the snapshot."""
    read: list[str] = []
    real = incremental._digest

    def counted(path: Path) -> str:
        read.append(str(path))
        return real(path)

    monkeypatch.setattr(incremental, "_digest", counted)
    return read


SETTLE = 0.25  # a margin above this kernel's clock tick (seed 4 above trusts 0.1 s)


def settle(monkeypatch: pytest.MonkeyPatch, seconds: float = SETTLE) -> None:
    """A margin of `seconds`, waited out: every file on disk is older than it by then."""
    monkeypatch.setattr(snapshot, "MARGIN_NS", int(seconds * 1e9))
    time.sleep(seconds + 0.1)


def test_an_unchanged_tree_reads_no_file_and_a_settled_edit_is_read(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle(monkeypatch)
    incremental_run(tree)
    read = count_reads(monkeypatch)
    assert as_rows(incremental_run(tree)) == as_rows(full_run(work, monkeypatch)())
    assert (stats().mode, read) == ("snapshot", [])
    path = tree / "hardware" / "nvidia-h100-sxm.yaml"
    assert keep_size_and_mtime(path.parent.parent, FixedChoice(path)) != "nothing"
    found = incremental_run(tree)
    assert (stats().mode, read) == ("incremental", [str(path)])  # only the ctime told
    assert as_rows(found) == as_rows(full_run(work, monkeypatch)())


class FixedChoice(random.Random):
    """A Random whose choice of a record file is fixed (the edit's other draws stay random)."""

    def __init__(self, path: Path, seed: int = 7) -> None:
        super().__init__(seed)
        self.path = path

    def choice(self, seq):  # type: ignore[no-untyped-def, override]
        return self.path if self.path in seq else super().choice(seq)


def test_touched_files_are_read_once_then_trusted(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    incremental_run(tree)
    settle(monkeypatch)
    for path in tree.rglob("*.yaml"):
        os.utime(path)  # new timestamps, same bytes (racy: newer than the margin)
    read = count_reads(monkeypatch)
    incremental_run(tree)
    assert stats().mode == "snapshot" and len(read) == len(list(tree.rglob("*.yaml")))
    time.sleep(SETTLE + 0.1)  # past the margin `settle` set
    incremental_run(tree)  # settled now: the stats are recorded again
    read.clear()
    incremental_run(tree)
    assert (stats().mode, read) == ("snapshot", [])


def test_rapid_same_size_edits_on_a_coarse_clock_are_seen(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Timestamps in steps of 2 s (FAT's): the racy rule catches a second edit in the same step.

    With a margin of 0 the second of two quick edits keeps the file's stat and is missed.
    """
    real, step = incremental.probe, 2_000_000_000

    def coarse(path: Path) -> snapshot.Seen | None:
        seen = real(path)
        if seen is None:
            return None
        dev, ino, size, mtime, ctime, link = seen
        return (dev, ino, size, mtime // step * step, ctime // step * step, link)

    monkeypatch.setattr(incremental, "probe", coarse)
    path = tree / "models" / "llama-3.1-70b.yaml"
    incremental_run(tree)
    for seed in range(6):
        keep_size_and_mtime(tree, FixedChoice(path, seed))
        incremental_run(tree)
        keep_size_and_mtime(tree, FixedChoice(path, seed + 100))
        assert as_rows(incremental_run(tree)) == as_rows(full_run(work, monkeypatch)())


def test_a_symlink_moved_to_a_file_with_the_same_bytes_is_rechecked(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same bytes, another target: the link's record id (its resolved path) changed."""
    path = tree / "hardware" / "nvidia-h100-sxm.yaml"
    retarget_a_symlink(tree, FixedChoice(path))
    incremental_run(tree)
    assert os.readlink(path.with_name("nvidia-h100-sxm-ln.yaml")) == path.name
    retarget_a_symlink(tree, FixedChoice(path))
    assert_incremental_is_full(work, monkeypatch)


def test_a_record_in_a_new_folder_is_found_though_no_old_folder_changed(
    tree: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the new folder's stat moves when a file is added to it: every folder is probed."""
    extra = tree / "sources" / "extra"
    extra.mkdir()
    settle(monkeypatch)
    incremental_run(tree)
    shutil.copy(tree / "sources" / "apxml-llama-3.1-405b.yaml", extra / "copy.yaml")
    assert_incremental_is_full(work, monkeypatch)
