"""Fuzzers for the surfaces newer than `kb validate`'s core (issue 37, item 7): `kb calc
--set`, a record on stdin (`kb validate -`), `-o PATH` and `kb diff`.

Whatever the input, each answers with its result, findings or a usage error (exit 2, one
`Error:`/`kb:` line): never "internal error", never a traceback. Cases are drawn with a
fixed seed (`derandomize`), so a run is repeatable; `KB_FUZZ_EXAMPLES` raises the count
(the suite's per-push default is small).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.cli import cli
from tests.conftest import SHIPPED_RECORDS, git, source_yaml, write_tree

PER_PUSH = int(os.environ.get("KB_FUZZ_EXAMPLES", "0")) or None
FIXED = {
    "derandomize": True,
    "database": None,
    "deadline": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}
SEED_FLOP = "flops/sched-tensor-parallel-crossover"
FOREIGN = ("internal error", "Traceback")


def _examples(default: int) -> int:
    return PER_PUSH or default


def _clean(result: object) -> None:
    output = getattr(result, "output", "")
    code = getattr(result, "exit_code", None)
    exception = getattr(result, "exception", None)
    assert code in (0, 1, 2), (code, output, exception)
    if code != 0 and exception is not None and not isinstance(exception, SystemExit):
        raise AssertionError(f"escaped: {type(exception).__name__}: {exception}\n{output}")
    assert not any(word in output for word in FOREIGN), output


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped records `kb calc --set` can read: per push the seed flop class and every
    record a --set value below names, with all they reference (tests/sample.py's closure);
    calc reads nothing else of the tree, so each case answers or refuses as on all of it
    (`test_calc_s_tree_holds_every_record_its_cases_name`). Every record with KB_FULL=1."""
    from tests.sample import full, sample_copy

    folder = tmp_path_factory.mktemp("shipped")
    if full():
        shutil.copytree(SHIPPED_RECORDS, folder / "records")
    else:
        sample_copy(folder / "records", CALC_ROOTS)
    return folder


# --- kb calc --set -------------------------------------------------------------------

NAMES = st.sampled_from(["N", "B", "d", "BW_hbm", "BW_link", "x", "", " ", "N N", "é", "1"])
VALUES_LISTED = [
    "4", "0", "-1", "1e9999", "1e-9999", "nan", "inf", "63 GB/s", "63 GB/s/s",
    "3 furlongs", "hardware/nvidia-h200-sxm#memory.bandwidth", "hardware/nope#x",
    "hardware/nvidia-h200-sxm#", "#", "../../etc/passwd#x", "1/0", "2**99999",
    "{value: 1}", "'quoted'", "1 GB/s=2", "\x00", "9" * 5000,
]  # fmt: skip
VALUES = st.one_of(st.sampled_from(VALUES_LISTED), st.text(max_size=30))


CALC_ROOTS = (SEED_FLOP, "hardware/nvidia-h200-sxm")


def test_calc_s_tree_holds_every_record_its_cases_name() -> None:
    """The premise of the per-push tree: every shipped id a case can name is a root."""
    named = {SEED_FLOP} | {
        value.split("#")[0] for value in VALUES_LISTED if "#" in value and "/" in value
    }
    assert {rid for rid in named if (SHIPPED_RECORDS / f"{rid}.yaml").is_file()} == set(CALC_ROOTS)


@settings(max_examples=_examples(40), **FIXED)
@given(pairs=st.lists(st.tuples(NAMES, VALUES), max_size=3), target=st.sampled_from(
    [None, "b_star_tp", "nope", "", "N"]
))  # fmt: skip
def test_calc_set_answers_or_refuses(
    shipped: Path, pairs: list[tuple[str, str]], target: str | None
) -> None:
    args = ["calc", SEED_FLOP, *([target] if target is not None else []), "--root", "records"]
    for name, value in pairs:
        args += ["--set", f"{name}={value}"]
    old = Path.cwd()
    os.chdir(shipped)
    try:
        result = CliRunner().invoke(cli, args)
    finally:
        os.chdir(old)
    _clean(result)


# --- kb validate - (a record on stdin) ------------------------------------------------

STDIN = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
    st.sampled_from(
        [
            source_yaml().encode(),
            source_yaml().encode() + b"\x00",
            b"\xff\xfe" + source_yaml().encode("utf-16-le"),
            b"kind: source\n<<: 5\n",
            b"a: &a [*a]\n",
            b"x: !!int 0x\n",
            b"[" * 5000,
        ]
    ),
)


@settings(max_examples=_examples(40), **FIXED)
@given(data=STDIN, name=st.sampled_from(
    ["records/sources/doc.yaml", "records/sources/x.yml", "records/../x.yaml", "/etc/passwd",
     "records/sources/", "records/nope/x.yaml"]
))  # fmt: skip
def test_a_record_on_stdin_gives_findings_or_a_usage_error(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, name: str
) -> None:
    folder = tmp_path_factory.mktemp("stdin")
    write_tree(folder / "records", {"sources/other.yaml": source_yaml("sources/other")})
    old = Path.cwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(
            cli, ["validate", "-", "--stdin-filename", name, "--root", "records"], input=data
        )
    finally:
        os.chdir(old)
    _clean(result)


# --- kb validate -o PATH --------------------------------------------------------------

KINDS = st.sampled_from(
    ["new", "file", "dir", "fifo", "link-file", "link-fifo", "link-dir", "dangling",
     "no-folder", "link-loop", "readonly-dir"]
)  # fmt: skip


def _make(folder: Path, kind: str) -> Path:
    path = folder / "out"
    if kind == "file":
        path.write_text("old\n", encoding="utf-8")
    elif kind == "dir":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-file":
        (folder / "real").write_text("old\n", encoding="utf-8")
        path.symlink_to("real")
    elif kind == "link-fifo":
        os.mkfifo(folder / "pipe")
        path.symlink_to("pipe")
    elif kind == "link-dir":
        (folder / "sub").mkdir()
        path.symlink_to("sub")
    elif kind == "dangling":
        path.symlink_to("absent/report")
    elif kind == "no-folder":
        path = folder / "absent" / "out"
    elif kind == "link-loop":
        path.symlink_to("out")
    elif kind == "readonly-dir":
        (folder / "ro").mkdir()
        os.chmod(folder / "ro", 0o500)
        path = folder / "ro" / "out"
    return path


@settings(max_examples=_examples(30), **FIXED)
@given(kind=KINDS)
def test_o_writes_a_regular_file_or_refuses(
    tmp_path_factory: pytest.TempPathFactory, kind: str
) -> None:
    folder = tmp_path_factory.mktemp("out")
    write_tree(folder / "records", {"sources/doc.yaml": source_yaml()})
    path = _make(folder, kind)
    before = os.lstat(path) if os.path.lexists(path) else None
    old = Path.cwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(cli, ["validate", "--full", "-o", str(path)])
    finally:
        os.chdir(old)
    _clean(result)
    if result.exit_code in (0, 1):
        assert os.path.isfile(path) and os.path.getsize(path) > 0
        if before is not None and stat.S_ISLNK(before.st_mode):
            assert os.path.islink(path)  # the link is kept; its target was written
    elif before is not None:
        after = os.lstat(path)
        assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert not [p for p in folder.rglob("*.tmp")]


# --- kb diff --------------------------------------------------------------------------

EDITS = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "break", "link-out", "link-in", "drop-folder",
                         "binary", "commit"]),
        st.integers(0, 3),
    ),
    min_size=1,
    max_size=8,
)  # fmt: skip


def _apply(root: Path, edit: str, index: int) -> None:
    path = root / "sources" / f"doc-{index}.yaml"
    if edit == "drop-folder":
        shutil.rmtree(root, ignore_errors=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(path):
        path.unlink()
    if edit == "add":
        path.write_text(source_yaml(f"sources/doc-{index}"), encoding="utf-8")
    elif edit == "break":
        path.write_text("kind: source\nid: [\n", encoding="utf-8")
    elif edit == "link-out":
        path.symlink_to("/etc/passwd" if index % 2 else "../../../../outside.yaml")
    elif edit == "link-in":
        path.symlink_to(f"doc-{(index + 1) % 4}.yaml")
    elif edit == "binary":
        path.write_bytes(b"\xff\x00kind: source\n")


@settings(max_examples=_examples(6), **FIXED)
@given(edits=EDITS)
def test_diff_over_any_history_answers_or_refuses(
    tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[str, int]]
) -> None:
    top = tmp_path_factory.mktemp("diff")
    (top / "README").write_text("a repository\n", encoding="utf-8")
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "root")
    root = top / "records"
    for edit, index in edits:
        if edit == "commit":
            git(top, "add", "-A")
            git(top, "commit", "-q", "--allow-empty", "-m", "step")
        else:
            _apply(root, edit, index)
    git(top, "add", "-A")
    git(top, "commit", "-q", "--allow-empty", "-m", "last")
    count = int(git(top, "rev-list", "--count", "HEAD").strip())
    old = Path.cwd()
    os.chdir(top)
    try:
        for args in (["HEAD~1", "HEAD"], [f"HEAD~{count - 1}"], ["HEAD", f"HEAD~{count - 1}"]):
            env = {"KB_CACHE_DIR": str(top / ".cache")}
            result = CliRunner(env=env).invoke(
                cli, ["diff", *args, "--root", "records", "--format", "json"]
            )
            _clean(result)
    finally:
        os.chdir(old)
        subprocess.run(["chmod", "-R", "u+w", str(top)], check=False)
