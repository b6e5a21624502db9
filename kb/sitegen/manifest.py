"""The build manifest: which inputs each page of the last build was rendered from.

A view of kb's one store (kb.store) kept in the output folder
(`.kb-build-manifest.kbstore`), published with the pages it describes (renamed
in after them; a publish cut short is finished by the next build before it reads
the manifest: kb.sitegen.output), so the two never disagree. It maps each page to its key
(kb.sitegen.deps), each record to the anchors of its charts (the charts page
lists them without re-rendering the record) and to its search-index entry with
that entry's key (the index is joined from the entries, and only an entry whose
inputs changed is made again: kb.sitegen.search). A page whose key is unchanged is
left as the previous build wrote it instead of being rendered. The store's salt,
`fingerprint(theme)`, is the one salt of kb.fingerprint (kb's code, the libraries that shape the
output, the schemas) with the theme's files, and it is the fingerprint part of
every page key too: changing any of them re-renders everything. A missing,
damaged or foreign manifest (either of its two entries) means a full build; its
entries are JSON text, parsed, never executed, and a marshal-ed dict of strings
that the store decodes only once its checksum holds. A build that showed a
timed-out check keeps no keys (`budget_bound`): its pages depended on how busy
the machine was.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from kb import fingerprint as kb_fingerprint
from kb.model import KnowledgeBase
from kb.store import ShardedStore, shard_file

STORE, KEY, SEARCH = ".kb-build-manifest", "manifest", "search"
MANIFEST = shard_file(STORE, 0, 1)  # the file's name in the output folder
FORMAT = 5  # 3: kept in kb's store; 4: no charts drawn in full; 5: search entries


@dataclass
class Manifest:
    """Page -> key; record id -> the anchors of its charts, and -> (key, its search entry)."""

    pages: dict[str, str] = field(default_factory=dict)
    charts: dict[str, list[str]] = field(default_factory=dict)
    search: dict[str, tuple[str, str]] = field(default_factory=dict)

    def to_text(self) -> str:
        payload = {"format": FORMAT, "pages": self.pages, "charts": self.charts}
        return json.dumps(payload, sort_keys=True, separators=(",", ":")) + "\n"

    def encoded(self, salt: str) -> bytes:
        """The manifest file's bytes (the site writer writes them with the pages)."""
        store = ShardedStore(None, STORE, salt, shards=1)
        store.put(KEY, self.to_text())
        store.put(SEARCH, self.search)
        return store.encode(0)


def load_manifest(site: Path | None, salt: str) -> Manifest:
    """Read the previous build's manifest; anything unexpected reads as none."""
    store = ShardedStore(site, STORE, salt, shards=1) if site is not None else None
    text, search = (store.get(KEY), store.get(SEARCH)) if store is not None else (None, None)
    try:
        payload = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        payload = None
    if not (isinstance(payload, dict) and payload.get("format") == FORMAT):
        return Manifest()
    pages, charts = payload.get("pages"), payload.get("charts")
    if not (isinstance(pages, dict) and isinstance(charts, dict) and isinstance(search, dict)):
        return Manifest()  # damaged or missing: the whole manifest is
    return Manifest(
        {k: v for k, v in pages.items() if isinstance(k, str) and isinstance(v, str)},
        {k: [str(a) for a in v] for k, v in charts.items() if isinstance(v, list)},
        {
            k: v
            for k, v in search.items()
            if isinstance(v, tuple) and len(v) == 2 and all(isinstance(i, str) for i in (k, *v))
        },
    )


def budget_bound(kb: KnowledgeBase) -> bool:
    """True when a check this build showed ran out of its time budget.

    Such a build keeps no page keys (an empty manifest), so the next build renders
    every page again instead of keeping one that shows a timeout. Pages kept from the
    last build came from a build without one, so only this run's analysis counts.
    """
    from kb.equations.engine import analysed

    analysis = analysed(kb)
    return any(r.budgeted for r in (analysis.results.values() if analysis is not None else ()))


def fingerprint(theme: Path) -> str:
    """The one salt of kb.fingerprint with the theme's files (templates are read per build)."""
    digest = hashlib.blake2b(kb_fingerprint.salt().encode(), digest_size=16)
    digest.update(kb_fingerprint.folder_fingerprint(theme).encode())
    return digest.hexdigest()
