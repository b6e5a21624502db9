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

What one suggestion may cost is bounded, whatever the input (a record of 99,000
keys at a bound id made a cold `kb validate` spend 14 s of CPU on suggestions):

- a record's field paths are offered up to MAX_PATHS, in the record's order;
- at most MAX_CANDIDATES candidates are scored: past that, those that hold a
  typed word come first, then those closest in length (a cheap shortlist: a
  hint, not a search);
- a name is compared by its first MAX_WORDS words, each cut to MAX_WORD characters;
- at most MAX_COMPARISONS word comparisons (difflib ratios) are made; scoring
  stops there, with the candidates scored so far. Each count is of work done, not
  of time, so the same input gets the same suggestion on any machine.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable
from difflib import SequenceMatcher
from functools import lru_cache

CUTOFF = 0.6
MAX_CANDIDATES = 2_000
MAX_WORDS = 8
MAX_WORD = 64
MAX_COMPARISONS = 20_000
MAX_PATHS = 20_000  # field paths of one record offered as candidates (kb.equations.bind)
_WORDS = re.compile(r"[-_./#]+")


def closest(wanted: str, known: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The known name to suggest for `wanted`, or None when none is close enough.

    Remembered for the last MEMO inputs (the name, the sorted known names, the cutoff: all
    the answer depends on): a later run of the same tree asks again for every reference
    that still dangles (kb lsp on each edit; RF001 in a full and an incremental run).
    """
    pool = tuple(sorted(set(known)))
    if len(pool) > MAX_CANDIDATES:  # a field walk's thousands of paths: not kept
        return _first(wanted, pool, cutoff)
    return _remembered(wanted, pool, cutoff)


def _first(wanted: str, known: tuple[str, ...], cutoff: float) -> str | None:
    ranked = ranked_matches(wanted, known, cutoff)
    return ranked[0] if ranked else None


MEMO = 32  # inputs remembered by `closest`, each of at most MAX_CANDIDATES known names
_remembered = lru_cache(maxsize=MEMO)(_first)


def ranked_matches(
    wanted: str, known: Iterable[str], cutoff: float = CUTOFF, work: list[int] | None = None
) -> list[str]:
    """Every known name scoring `cutoff` or more, best first (see the module docstring).

    `work`, when given, gets the number of difflib comparisons made (at most
    MAX_COMPARISONS) added to its first item.
    """
    typed = _name(wanted).lower()
    pool = _shortlist(typed, _same_folder(wanted, sorted(set(known))), "/" in wanted)
    spent = [0]
    scored = []
    for candidate in pool:
        if spent[0] >= MAX_COMPARISONS:
            break
        name = _name(candidate).lower() if "/" in wanted else candidate.lower()
        score = word_score(typed, name, spent)
        if score >= cutoff and candidate != wanted:
            spent[0] += 1
            whole = SequenceMatcher(
                None,
                wanted.lower()[: MAX_WORD * MAX_WORDS],
                candidate.lower()[: MAX_WORD * MAX_WORDS],
            ).ratio()
            scored.append((-score, -whole, len(candidate), candidate))
    if work is not None:
        work[0] += spent[0]
    return [row[-1] for row in sorted(scored)]


def _shortlist(typed: str, pool: list[str], by_name: bool) -> list[str]:
    """At most MAX_CANDIDATES of `pool`: holding a typed word first, then closest in length.

    Cheap per candidate (a substring test, a length): no word split, no difflib.
    """
    if len(pool) <= MAX_CANDIDATES:
        return pool
    words = _words(typed)
    folded = [(_name(c) if by_name else c).lower() for c in pool]
    holding = [i for i, name in enumerate(folded) if any(w in name for w in words)]
    chosen = holding[:MAX_CANDIDATES]
    if len(chosen) < MAX_CANDIDATES:
        taken = set(chosen)
        rest = (i for i in range(len(pool)) if i not in taken)
        size = len(typed)
        nearest = heapq.nsmallest(
            MAX_CANDIDATES - len(chosen), rest, key=lambda i: abs(len(folded[i]) - size)
        )
        chosen += nearest
    return [pool[i] for i in sorted(chosen)]


def _words(text: str) -> list[str]:
    return [w[:MAX_WORD] for w in _WORDS.split(text, maxsplit=MAX_WORDS) if w][:MAX_WORDS]


def did_you_mean(wanted: str, known: Iterable[str], otherwise: str = "") -> str:
    """`did you mean 'x'?` for the closest known name, else `otherwise`."""
    close = closest(wanted, known)
    return f"did you mean {close!r}?" if close else otherwise


def word_score(typed: str, candidate: str, spent: list[int] | None = None) -> float:
    """The length-weighted mean, over the typed words, of each one's best ratio to a word.

    `spent[0]`, when given, counts the difflib comparisons made.
    """
    words, theirs = _words(typed), _words(candidate)
    if not words or not theirs:
        return 0.0
    total = sum(len(w) for w in words)
    return sum(len(w) * _best(w, theirs, spent) for w in words) / total


def _best(word: str, theirs: list[str], spent: list[int] | None) -> float:
    if word in theirs:
        return 1.0
    if spent is not None:
        spent[0] += len(theirs)
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
