"""`KB_SCHEMAS=DIR kb validate` on a plain `kb schemas export DIR` (no `$id`s), as documented."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_kb, source_yaml, write_tree


def tree(tmp_path: Path) -> Path:
    write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml()})
    return tmp_path


def test_the_plain_export_is_used_through_its_relative_refs(tmp_path: Path) -> None:
    root = tree(tmp_path)
    schemas = tmp_path / "schemas"
    assert run_kb(["schemas", "export", str(schemas)], cwd=root).returncode == 0
    defs_path = schemas / "defs.schema.json"
    assert "$id" not in json.loads(defs_path.read_text(encoding="utf-8"))
    env = {"KB_SCHEMAS": str(schemas), "KB_CACHE_DIR": str(tmp_path / "cache")}
    done = run_kb(["validate"], cwd=root, env=env)
    assert (done.returncode, done.stdout) == (0, "checked 1 records: no findings\n"), done.stderr
    # a rule of the exported defs (reached only through source.schema.json's relative
    # $ref) is the one applied: titles longer than 3 characters are refused now
    defs = json.loads(defs_path.read_text(encoding="utf-8"))
    defs["$defs"]["common"]["properties"]["title"]["maxLength"] = 3
    defs_path.write_text(json.dumps(defs), encoding="utf-8")
    done = run_kb(["validate", "--full"], cwd=root, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "records/sources/doc.yaml:3:" in done.stdout and " SC001 " in done.stdout


def test_an_id_that_is_not_a_string_is_still_refused(tmp_path: Path) -> None:
    root = tree(tmp_path)
    schemas = tmp_path / "schemas"
    run_kb(["schemas", "export", str(schemas)], cwd=root)
    path = schemas / "source.schema.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "$id": 7}), encoding="utf-8")
    env = {"KB_SCHEMAS": str(schemas), "KB_CACHE_DIR": str(tmp_path / "cache")}
    done = run_kb(["validate"], cwd=root, env=env)
    assert done.returncode == 2 and "$id is not a string" in done.stderr, done.stderr
