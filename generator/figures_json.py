"""What figures.json holds: each article's entry (every figure it shows and every claim it makes, one per
line, as json.dumps would write them) and the files that join entries (a page's own, the site's, a
family's parts)."""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Callable
from typing import NamedTuple

from generator import pagecache
from generator.claims import claim_line, claim_line_once, own, rests_on_groups
from generator.escape import json_encoder
from generator.listingcache import RowTexts

_enc = json_encoder()


PIECE_LINES = 4096  # lines of figures or claims per encoded piece of an entry


def figures_entry(
    slug: str,
    title: str,
    figures,
    prices_checked,
    claims=(),
    claim=claim_line,
    figure=None,
    line_runs=None,
    aliases: tuple[str, ...] = (),
    rests_on: dict[str, tuple[str, ...]] | None = None,
) -> list[bytes]:
    """One article's entry in figures.json, UTF-8, in pieces: every figure it shows, sorted, one per line,
    and its claims. Joined, the pieces are the entry; a large listing's (48 MB at 100,000 pages) is never
    one string, nor one list of every line.

    Each figure line is what json.dumps(sort_keys=True, ensure_ascii=False,
    allow_nan=False) writes for the figure's {"id", "inputs", "unit", "value"},
    put together from the C string escaper and float's repr (what the encoder
    itself calls): a third faster than building a dict per figure and
    encoding the list, and no indent (which would force the slow pure-Python
    encoder). Claims (generator.claims) follow as {"id", "subject"} lines,
    made by `claim` (claim_line, which remembers them, or claim_line_once);
    `figure` makes a figure's line (by default with the head of its line
    remembered: a family's pages share ids, units and inputs). `line_runs`, lists of lines in order,
    are figures already sorted and made into lines (a listing's). `aliases`, the page's earlier addresses,
    come first when it has any (`costpress changes` reads a renamed page's changes from them). `rests_on`
    (the page's Context.rests_on), when it has any, follows the price dates: groups of value ids, each
    with the figures the claims of those values rest on (generator.claims).
    """
    earlier = f'  "aliases": {_enc(list(aliases))},\n' if aliases else ""
    out = [f' {_enc(slug)}: {{\n{earlier}  "claims": [\n'.encode()]
    _lines_into(out, claims, claim)
    out.append(b'\n  ],\n  "figures": [\n')
    if line_runs is not None:
        for n, lines in enumerate(line_runs):
            out.append(((",\n   " if n else "   ") + ",\n   ".join(lines)).encode())
    else:
        _lines_into(out, sorted(figures, key=_by_id), figure or _figure_line)
    checked = _enc([d.isoformat() for d in prices_checked])
    rests = _rests_line(rests_on) if rests_on else ""
    out.append(f'\n  ],\n  "prices_checked": {checked},\n{rests}  "title": {_enc(title)}\n }}'.encode())
    return out


def _rests_line(rests_on: dict[str, tuple[str, ...]]) -> str:
    """An entry's "rests_on" line (a family's pages of one model and method share theirs)."""
    return _rests_line_of(tuple(rests_on.items()))


@functools.lru_cache(maxsize=1024)
def _rests_line_of(items: tuple) -> str:
    groups = [{"claims": keys, "figures": figures} for keys, figures in rests_on_groups(dict(items))]
    return f'  "rests_on": {_enc(groups)},\n'


def _lines_into(out: list[bytes], items: list, line: Callable) -> None:
    """Append '   ' + ",\n   ".join(map(line, items)) to `out`, encoded PIECE_LINES lines at a time."""
    for start in range(0, len(items), PIECE_LINES):
        text = ",\n   ".join(map(line, items[start : start + PIECE_LINES]))
        out.append(((",\n   " if start else "   ") + text).encode())


_string = json.encoder.encode_basestring  # a JSON string, non-ASCII kept: the C function json uses


_by_id = operator.attrgetter("id")
_first = operator.itemgetter(0)


def _figure_line(f) -> str:
    value = f.value
    # a finite float is written as its repr; anything else (NaN raises) as the encoder writes it
    number = float.__repr__(value) if type(value) is float and value - value == 0 else _enc(value)
    return _figure_head(f.id, f.unit, tuple(f.inputs)) + number + "}"


def _figure_head_once(fid: str, unit: str, inputs: tuple[str, ...]) -> str:
    shown = "[" + ", ".join(map(_string, inputs)) + "]" if inputs else "[]"
    return f'{{"id": {_string(fid)}, "inputs": {shown}, "unit": {_string(unit)}, "value": '


# a family's pages show figures of the same ids, units and inputs
_figure_head = functools.lru_cache(maxsize=4096)(_figure_head_once)


def _figure_line_once(f) -> str:
    """_figure_line without remembering the line's head: a listing's ids are each its own."""
    value = f.value
    number = float.__repr__(value) if type(value) is float and value - value == 0 else _enc(value)
    return _figure_head_once(f.id, f.unit, f.inputs) + number + "}"


def figures_pieces(chunks: list[bytes], parts: list[str] | None = None) -> list[bytes]:
    """figures.json from article entries (UTF-8, already sorted by slug), as its pieces in order.

    Workers encode their page's entry; a Publisher writes the pieces as they
    are (writev), so a large file is never joined in memory. The site's own
    figures.json names its `parts`, the files that hold the family pages.
    """
    pieces = [pagecache.FIGURES_HEAD]
    for chunk in chunks:
        pieces += (chunk, b",\n")
    if chunks:
        pieces.pop()
    if parts is None:
        pieces.append(pagecache.FIGURES_TAIL)
    else:
        pieces.append(b'\n}, "parts": ' + json.dumps(parts).encode() + b"}\n")
    return pieces


def figures_doc(chunks: list[bytes]) -> bytes:
    """figures_pieces joined: one page's figures.json, or the site's when it is compared in memory."""
    return b"".join(figures_pieces(chunks))


def listing_chunk(listing, texts=None) -> list[bytes]:
    """A listing's figures.json entry, encoded in pieces: each priced row's figures, and per model which
    setup is cheapest, how many fit, and what each setup that does not fit would need. `texts`
    (listingcache.RowTexts) keeps the rows' figure lines from the last build."""
    from generator.listing import _need_text

    claims = []
    for r in listing.rows:  # families.Row: read by attribute (a subscript is a Python-level call)
        if not r.fits:
            # the listing's page, made first in the same process, gave the row its text
            need = getattr(r, "need", None)
            claims.append((f"{r.key}.memory", need if need is not None else _need_text(r)))
    rests_on = {}
    for c in listing.cheapest:  # what the page's answer states (families.cheapest_by_model)
        if c.best is not None:
            claims.append((f"{c.model}.cheapest_per_token", c.setup))
            # the rows come ranked by cost per million tokens, then by the run's cost (families.family_rows)
            rests_on[f"{c.model}.cheapest_per_token"] = (
                own(f"{c.model}/*.usd_per_million"),
                own(f"{c.model}/*.cost_with_startup"),
            )
        claims += [(f"{c.model}.fitting", str(c.fitting)), (f"{c.model}.not_fitting", str(c.not_fitting))]
    claims.sort()
    # every figure of the fitting rows, by id (a listing's figures are sorted as a page's are): made into
    # lines a run at a time, or kept from the last build, so that no list holds every line at once
    figures = sorted(
        [(f"{r.key}.{name}", r, n) for r in listing.rows if r.fits for n, (name, _) in enumerate(LISTED)], key=_first
    )
    return figures_entry(
        listing.slug,
        listing.title,
        (),
        listing.prices_checked,
        claims,
        claim_line_once,
        line_runs=_figure_runs(figures, texts or NO_TEXTS),
        aliases=listing.aliases,
        rests_on=rests_on,
    )


# a listing's figures of each fitting row: (the row's attribute, the figure's unit)
LISTED = (("usd_per_hour", "USD per hour"), ("usd_per_million", "USD per million tokens"), ("cost_with_startup", "USD"))


def _figure_runs(figures: list[tuple], texts):
    """The figures' lines, PIECE_LINES at a time, each kept by `texts` (listingcache.RowTexts) or made."""
    for start in range(0, len(figures), PIECE_LINES):
        run = figures[start : start + PIECE_LINES]
        yield texts.each_keyed("figures", [f[0] for f in run], [f[1].provider for f in run], _line_of(run))


def _line_of(run: list[tuple]):
    def line(i: int) -> str:
        fid, row, n = run[i]
        name, unit = LISTED[n]
        return _figure_line_once(_Listed(fid, getattr(row, name), unit))

    return line


NO_TEXTS = RowTexts()  # nothing kept and nothing written: a listing built in memory


class _Listed(NamedTuple):
    """A listing's figure (model.Figure's fields, made lighter: a listing has 30,000 at 10,000 pages)."""

    id: str
    value: float
    unit: str
    inputs: tuple[str, ...] = ()
