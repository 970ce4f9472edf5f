"""Price snapshots parsed ahead: when many are in no cache, a second process parses half of them.

A cold build spends its first half second on one core: loading the
content, then the families' rows. Most of the loading is the price
snapshots (about 1 ms each: the YAML, the schema, the offers' records; a
10,000-page benchmark has 227 of them, 100,000 pages 2,270), and the other
core has nothing to do until the rows are made. So when at least FROM
snapshots are not in the parse cache, `start` forks one process for the
second half of them. For each snapshot there that loads without a problem,
it hands back the records' line the parse cache keeps (parsecache), with
the documents it parsed; the build takes those snapshots as it takes the
last build's. A file with a problem, or one that changed meanwhile (its key
is read again), is left to the build, which loads it and tells its problem
in its place among the others; should the process fail or die, the build
parses its half itself. Either way the records, the problems and the parse
cache are what one process makes alone (tests/test_parse_ahead.py).
"""

from __future__ import annotations

from collections.abc import Callable

from generator.records import Snapshot
from generator.workers import Aside

# Snapshots no cache holds, at least, before a second process parses half of them: a fork and its results
# cost a few milliseconds, a snapshot about one.
FROM = 48


class ParsedAhead:
    """The second half of the snapshots to parse, parsed by a forked process while this one parses the first."""

    def __init__(self, share: list, load_file: Callable, known: str, parsed) -> None:
        self.parsed = parsed
        self.keys = {key for *_, key in share}
        self.made: dict[str, str] | None = None
        self.aside = Aside(lambda: _parse_share(share, load_file, known, parsed))

    def snapshot(self, key: str) -> Snapshot | None:
        """The snapshot under `key` when the other process made it (waiting for it at the first of its share)."""
        if key not in self.keys:
            return None
        if self.made is None:  # (None: it failed or died, and this process parses its share)
            self.made, docs, count = self.aside.result() or ({}, {}, 0)
            self.parsed.adopt_docs(docs, count)
        line = self.made.pop(key, None)
        return self.parsed.adopt_snapshot(key, line) if line is not None else None

    def close(self) -> None:
        """Done with the process: it has sent all it had, or it is stopped now (the build stopped loading)."""
        self.aside.close()
        self.made = {}


def start(files: list, load_file: Callable, known: str, parsed) -> ParsedAhead | None:
    """A process parsing the second half of the snapshots that no cache holds, when there are enough.

    `files`: (provider, path, shown as, records' key) in the order the build loads them; `load_file`:
    (provider, path, shown as, problems) -> the snapshot or None; `known`: the GPUs, as the key has them.
    """
    if parsed is None or not parsed.ahead:
        return None
    todo = [f for f in files if f[3] is not None and not parsed.has_snapshot(f[3])]
    if len(todo) < FROM:
        return None
    return ParsedAhead(todo[len(todo) // 2 :], load_file, known, parsed)


def _parse_share(share: list, load_file: Callable, known: str, parsed) -> tuple[dict, dict, int]:
    """In the second process: each file's records' line by its key, the documents parsed on the way and
    how many files were parsed."""
    before, count = set(parsed.new), parsed.parsed
    made = {}
    for provider, path, display, key in share:
        problems: list[str] = []
        snap = load_file(provider, path, display, problems)
        if snap is not None and not problems and key == parsed.snapshot_key(path, display, provider, known):
            line = parsed.snapshot_line(snap)
            if line is not None:
                made[key] = line
    docs = {digest: line for digest, line in parsed.new.items() if digest not in before}
    return made, docs, parsed.parsed - count
