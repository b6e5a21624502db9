"""One matcher for "did you mean ...?": record ids, rule codes, symbols, fields.

Every command and rule that meets an unknown name asks `closest` for the known
name to suggest, so a typo gets the same answer from `kb show`, `kb calc`,
`kb ledger`, `kb explain`, `--select`/`--ignore` and RF001.

How a candidate is scored (0..1, `CUTOFF` or more is suggested):

- a record id is compared by its last segment, and only with the ids of the
  same folder when any exists (`hardware/nvidia-h200` is never matched against
  `flops/...`, and a shared folder never makes two ids look alike);
- the name is split into words at `-`, `_`, `.`, `/` and `#`; each typed word
  scores its best difflib ratio against the candidate's words, and the score
  is the mean weighted by word length. A candidate that holds every typed word
  scores 1, so `nvidia-h200` suggests `nvidia-h200-sxm` before `nvidia-b200`
  (which a plain character ratio prefers: 0.91 against 0.85);
- ties go to the candidate closest as a whole string (difflib ratio), then the
  shorter, then the first in sorted order. Case is ignored.

CUTOFF is 0.6: a one-word name must share at least 60 % of its characters in
order (`SCOO1` -> `SC001` is exactly 0.6); an id whose typed words are all
unrelated to a candidate's (`hardware/zzz`) gets no suggestion, since an
arbitrary one misleads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher

CUTOFF = 0.6
_WORDS = re.compile(r"[-_./#]+")


def closest(wanted: str, known: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The known name to suggest for `wanted`, or None when none is close enough."""
    ranked = ranked_matches(wanted, known, cutoff)
    return ranked[0] if ranked else None


def ranked_matches(wanted: str, known: Iterable[str], cutoff: float = CUTOFF) -> list[str]:
    """Every known name scoring `cutoff` or more, best first (see the module docstring)."""
    pool = _same_folder(wanted, sorted(set(known)))
    typed = _name(wanted).lower()
    scored = []
    for candidate in pool:
        name = _name(candidate).lower() if "/" in wanted else candidate.lower()
        score = word_score(typed, name)
        if score >= cutoff and candidate != wanted:
            whole = SequenceMatcher(None, wanted.lower(), candidate.lower()).ratio()
            scored.append((-score, -whole, len(candidate), candidate))
    return [row[-1] for row in sorted(scored)]


def did_you_mean(wanted: str, known: Iterable[str], otherwise: str = "") -> str:
    """`did you mean 'x'?` for the closest known name, else `otherwise`."""
    close = closest(wanted, known)
    return f"did you mean {close!r}?" if close else otherwise


def word_score(typed: str, candidate: str) -> float:
    """The length-weighted mean, over the typed words, of each one's best ratio to a word."""
    words = [w for w in _WORDS.split(typed) if w]
    theirs = [w for w in _WORDS.split(candidate) if w]
    if not words or not theirs:
        return 0.0
    total = sum(len(w) for w in words)
    return sum(len(w) * _best(w, theirs) for w in words) / total


def _best(word: str, theirs: list[str]) -> float:
    if word in theirs:
        return 1.0
    return max(SequenceMatcher(None, word, other).ratio() for other in theirs)


def _folder(text: str) -> str:
    return text.rpartition("/")[0]


def _name(text: str) -> str:
    return text.rpartition("/")[2]


def _same_folder(wanted: str, known: list[str]) -> list[str]:
    if "/" not in wanted:
        return known
    folder = _folder(wanted).lower()
    same = [k for k in known if _folder(k).lower() == folder]
    return same or known
