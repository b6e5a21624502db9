"""A record file under records/ must end in `.yaml`, never `.yml`.

Why: A record's id is its path under records/ without `.yaml`, and every part of kb
(references, `kb new`, `kb show`, the git comparison, the site) works from that one
extension. A `.yml` file would either be skipped in silence, hiding whatever it says
from every check, or claim the same id as its `.yaml` twin. kb refuses it loudly instead,
whether it is found under records/ or named on the command line.

Bad:

    records/hardware/nvidia-h100-sxm.yml

Good:

    records/hardware/nvidia-h100-sxm.yaml
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD012"
NAME = "yml-extension"
SEVERITY = Severity.ERROR
HINT = "rename the file to end in .yaml"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
