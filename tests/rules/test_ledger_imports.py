"""A check of a tree with no placement or proposal imports no ledger resolution, no placement view.

The ledger rules (LG003-LG005, LG008, LG010, LG011) import kb.ledger.inputs and what it
needs (~100 ms of CPU) only when the knowledge base has a placement or a proposal to
check, and kb.kinds imports a kind's module when a view of that kind is first built:
re-checking the ~1,000 records one hardware change reaches (bench/run.py's "1 changed")
pays for neither. What is found is the same either way (the rules have nothing to check
then); tests/rules/test_rule_cases.py holds their findings where there is something.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import source_yaml, write_tree

PROBE = """
import json, sys
from kb.api import validate
result = validate(sys.argv[1], remember=False)
loaded = sorted(m for m in sys.modules if m.startswith(("kb.ledger.", "kb.kinds.")))
print(json.dumps({"findings": len(result.findings), "modules": loaded}))
"""


def test_no_placement_no_ledger_import(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml()})
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(root)],
        capture_output=True,
        text=True,
        check=True,
        env={"KB_JOBS": "1", "KB_CACHE_DIR": str(tmp_path / "cache"), "PATH": ""},
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["findings"] == 0
    assert "kb.ledger.inputs" not in seen["modules"]
    assert "kb.kinds.placement" not in seen["modules"]
