"""A family's rows made on both cores: when many are in no cache, a second process makes some of them.

After the content is loaded, a cold build makes every family's rows (model ×
method × offer: 18,160 in the 10,000-page benchmark, 0.14 s) on one core,
and only then forks the processes that use the other. So when at least FROM
rows are to be made, `start` forks one process for the providers holding
the last 42% of their offers (the build keeps MINE). It makes their rows with the build's own
function and hands each provider's back as the row cache holds them
(rowcache.encode); the build takes them as it takes the rows a cache kept,
a provider at a time, writing each to the next cache file as it goes, and
gives rows of one job (model, method, GPU, count) the same values objects,
as rows made here share them (families._shared_job). Should the process
fail or die, the build makes those rows itself.
"""

from __future__ import annotations

from collections.abc import Callable

from generator.workers import Aside

# Rows to make, at least, before a second process makes some of them: a fork and the rows' return cost a
# few milliseconds, a thousand rows about eight.
FROM = 4000
# The build's share of the offers: it also takes the other process's rows back (about a quarter of the
# time their making takes), and the other process starts later and encodes its rows.
MINE = 0.58


class RowsAhead:
    """The rows of some providers (`providers`), made by a forked process while this one makes the others."""

    def __init__(self, share: list[str], make: Callable[[str], bytes], kept) -> None:
        self.providers = set(share)
        self.kept = kept
        self.made: dict[str, bytes] | None = None
        self.taken: tuple[str, dict | None] = ("", None)  # the provider whose rows were asked for last
        self.aside = Aside(lambda: _made(share, make))

    def rows(self, provider: str) -> dict | None:
        """The provider's rows by (model, method), as the row cache gives them; None if the process failed
        (this one makes them). Waits for the process the first time. Ask for one provider's parts together:
        only the last provider's rows are held (at 100,000 pages the other process makes 76,000)."""
        if self.made is None:
            self.made = self.aside.result() or {}
        if self.taken[0] != provider:
            data = self.made.pop(provider, None)
            self.taken = provider, (self.kept.made_elsewhere(provider, data) if data is not None else None)
        return self.taken[1]

    def close(self) -> None:
        """Done with the process: it has sent its rows and exits, or it is stopped now (the grid stopped)."""
        self.aside.close()
        self.made = {}


def start(cat, axes: dict, kept, compute: Callable) -> RowsAhead | None:
    """A process making the rows of the providers that hold the last 1 - MINE of the offers no cache has rows
    for, when there are at least FROM rows; `compute(model, method, snapshot)` makes one part's rows."""
    from generator.rowcache import encode

    if not kept.cache.ahead:
        return None
    models = [cat.models[m] for m in axes["models"] if m in cat.models]
    methods = [cat.methods[m] for m in axes["methods"] if m in cat.methods]
    if not models or not methods:
        return None
    # asked in the order the grid asks (kept_rows remembers): the providers whose rows must be made
    snaps = {p: snap for p in axes["providers"] if (snap := cat.snapshot(p)) is not None}
    todo = [p for p, snap in snaps.items() if kept.kept_rows(p, snap) is None]
    offers = [len(snaps[p].offers) for p in todo]
    if len(models) * len(methods) * sum(offers) < FROM:
        return None
    mine, seen, cut = sum(offers) * MINE, 0, len(todo)
    for n, count in enumerate(offers):
        seen += count
        if seen >= mine:
            cut = n + 1
            break
    share = todo[cut:]
    if not share:
        return None

    def make(provider: str) -> bytes:
        snap = snaps[provider]
        return encode({(m.id, x.id): compute(m, x, snap) for m in models for x in methods})

    return RowsAhead(share, make, kept)


def _made(providers: list[str], make: Callable[[str], bytes]) -> dict[str, bytes]:
    """In the second process: each provider's rows, encoded."""
    return {provider: make(provider) for provider in providers}
