"""The organiser's duplicate flags on /admin: byte-identical bots across accounts and near-duplicate entry files.

Both are bounded however many versions and bots the league has. Byte-identical bots are found by one indexed
lookup of the files fingerprint the store keeps beside every bot (``bots.files_hash``, schema 6): no snapshot is
read. Near-duplicates compare the current bots' entry files (difflib, by lines); each pair's similarity is kept
per pair of content digests (:class:`NearCache`), so a view of /admin compares only the pairs it has never seen
(a new version against the others), and reads the entry text of those bots only.
"""
from __future__ import annotations

import difflib
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from leaderboards import teams as tm
from leaderboards.store import Bot, Store

NEAR = 0.9
"""Similarity (difflib's ratio of the entry files' lines) from which two accounts' bots are flagged as
near-duplicates."""
NEAR_LINES = 1000
"""Lines of each entry file compared (stripped, blank ones left out). Compared character by character, two
near-identical 67 kB files take minutes of the server's one interpreter lock on every view of /admin; by lines,
capped, the worst pair is a fraction of a second."""
MAX_PAIRS = 100_000
"""Pairs of digests whose similarity is kept (about 150 bytes each; the least recently used forgotten first):
every pair of about 450 current bots."""


def identical(store: Store, league_id: int, bots: Sequence[Bot]) -> dict[str, list[str]]:
    """Each current submitted bot's label -> the labels of the bots of other names (retired versions included)
    with the same files (``bots``: the league's bots, for their labels)."""
    labels = {b.id: b.label for b in bots}
    names = {b.id: b.name for b in bots}
    # a team's bot and its members' own bots from before they joined are one side's work, not a copy
    one_side = {pair for t in tm.teams(store, league_id) for a in t.members
                for pair in ((t.name, a.name), (a.name, t.name))}
    out: dict[str, list[str]] = {}
    for bot_id, twin_id in store.same_files(league_id):
        if bot_id in labels and twin_id in labels:  # (a bot entered since ``bots`` was read: the next view)
            if (names[bot_id], names[twin_id]) not in one_side:
                out.setdefault(labels[bot_id], []).append(labels[twin_id])
    return out


def lines(source: str) -> list[str]:
    """What is compared of an entry file: its first :data:`NEAR_LINES` non-blank lines, stripped."""
    return [s for line in source.splitlines() if (s := line.strip())][:NEAR_LINES]


def similarity(a: list[str], b: list[str]) -> float:
    """difflib's ratio of two line lists, 0.0 as soon as a cheaper upper bound is below :data:`NEAR`."""
    if a == b:
        return 1.0
    # (autojunk would never match a line found in over 1% of a file: `return x` lines, closing brackets)
    m = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if m.real_quick_ratio() < NEAR or m.quick_ratio() < NEAR:
        return 0.0
    return m.ratio()


class NearCache:
    """Similarities by pair of content digests (the server's, kept for its life; thread-safe)."""

    def __init__(self, size: int = MAX_PAIRS) -> None:
        self.size = size
        self.pairs: OrderedDict[tuple[str, str], float] = OrderedDict()
        self.guard = threading.Lock()
        self.compared = 0
        """Pairs compared so far (the cache's misses)."""

    def get(self, a: str, b: str, compute: Callable[[], float]) -> float:
        key = (a, b) if a < b else (b, a)
        with self.guard:
            if key in self.pairs:
                self.pairs.move_to_end(key)
                return self.pairs[key]
        value = compute()
        with self.guard:
            self.compared += 1
            self.pairs[key] = value
            while len(self.pairs) > self.size:
                self.pairs.popitem(last=False)
        return value


def near_duplicates(store: Store, bots: Sequence[Bot], cache: NearCache) -> list[tuple[str, str, float]]:
    """Pairs of current submitted one-file bots of different accounts whose entry files are nearly the same lines
    (``bots``: those bots; their entry text is read from the store only for pairs not in ``cache``)."""
    texts: dict[int, list[str]] = {}

    def text(bot: Bot) -> list[str]:
        if bot.id not in texts:
            texts[bot.id] = lines(store.bot_source(bot.id))
        return texts[bot.id]

    def compare(a: Bot, b: Bot) -> float:
        return similarity(text(a), text(b))
    files = sorted((b for b in bots if b.kind == "file"), key=lambda b: b.label)
    out = []
    for i, a in enumerate(files):
        for b in files[i + 1:]:
            if a.name == b.name or a.content_hash == b.content_hash:
                continue
            ratio = cache.get(a.content_hash, b.content_hash, functools.partial(compare, a, b))
            if ratio >= NEAR and ratio < 1.0:
                out.append((a.label, b.label, ratio))
    return out
