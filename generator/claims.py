"""Claims: every statement a page makes that is not a figure, for figures.json and the change report.

A page's text is its templates and prose applied to the values its kind
computed. Figures (numbers with units) are recorded as such; everything
else a page can state comes from the other values: names and labels (which
setup is cheapest, which is recommended), yes/no decisions (fits, tied,
cheapest), counts and ranks ("4th of 62"), and the lists of neighbours with
their costs. Each becomes a claim: an id (where it sits in the page's
values) and its subject (what it says). Dates are left out: a refresh
moves them on every page.

What a decision rests on (which setup is cheapest, a rank, a tie) the
page's kind says (`Context.rests_on`): the ids of the values that state it
(a claim whose id is one of them or starts with one, at a '.' or a '[',
takes the longest's) and the figures that decide it, as "#<figure id>" for
one of the page itself and "<slug>#<figure id>" for one of another page (a
family page's rank rests on its listing's costs), where "*" in an id
stands for any text. figures.json keeps it once per page, as groups of
value ids with their figures (`rests_on_groups`). A claim that states what
content says (a name, a setting, a count in the params) rests on none.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

_string = json.encoder.encode_basestring  # a JSON string, non-ASCII kept: the C function json uses
SKIP = {"article"}  # the page's own title and date
IDS = {"slug", "key"}  # identifiers for links and lookups: what they name is stated by its label
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")  # a date inside a sentence is left out like any other date


def claims_of(values: dict) -> list[tuple[str, str]]:
    """(id, subject) for every non-figure statement the values can make, sorted by id."""
    out: list[tuple[str, str]] = []
    for key, value in values.items():
        if key.startswith("_") or key in SKIP or callable(value):
            continue
        _walk(key, value, out, in_list=False)
    out.sort()
    return out


def _walk(path: str, value: Any, out: list, in_list: bool) -> None:
    kind = type(value)  # the common cases first, by exact type: a family page has about eighty values
    if kind is str:
        out.append((path, DATE.sub("<date>", value) if "-" in value else value))
    elif kind is float:
        if in_list:  # inside a list a number is part of a ranking, not a figure the page recorded
            out.append((path, format(value, ".8g")))  # eight digits: cents of any price a page prints
    elif kind is dict:
        for k, v in value.items():
            if type(k) is not str or not (k[:1] == "_" or k in IDS or k.endswith("_slug") or callable(v)):
                _walk(f"{path}.{k}", v, out, in_list)
    elif kind is bool:
        out.append((path, "yes" if value else "no"))
    elif kind is int:
        out.append((path, str(value)))
    elif value is None:
        out.append((path, "none"))
    elif kind is list or kind is tuple:
        out.append((f"{path}.count", str(len(value))))
        out.extend([(path + suffix, subject) for suffix, subject in _items(value)])
    elif isinstance(value, str):  # Markup
        out.append((path, str(value)))
    elif isinstance(value, dict):
        _walk(path, dict(value), out, in_list)
    # dates are left out; other objects (records the templates read) carry figures and names walked elsewhere


_LISTS: dict[int, tuple[Any, list[tuple[str, str]]]] = {}


def _items(value: list | tuple) -> list[tuple[str, str]]:
    """The claims of a list's items, as (path suffix, subject); remembered per list object, since the
    pages of a family share their neighbour lists (the entry keeps the list alive, so its id stays its own)."""
    kept = _LISTS.get(id(value))
    if kept is not None and kept[0] is value:
        return kept[1]
    found: list[tuple[str, str]] = []
    for i, item in enumerate(value):
        _walk(f"[{i}]", item, found, True)
    if len(_LISTS) > 4096:
        _LISTS.clear()
    _LISTS[id(value)] = (value, found)
    return found


def own(figure_id: str) -> str:
    """A figure of the page itself, as rests_on names it."""
    return "#" + figure_id


def on_page(slug: str, figure_id: str) -> str:
    """A figure of another page, as rests_on names it."""
    return f"{slug}#{figure_id}"


def rests_on_groups(rests_on: dict[str, tuple[str, ...]]) -> list[tuple[list[str], list[str]]]:
    """A page's rests_on as figures.json keeps it: (value ids, figures) for each set of figures, value ids
    sorted, groups in the order of their first id."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for key, figures in rests_on.items():
        groups.setdefault(tuple(figures), []).append(key)
    return sorted((sorted(keys), list(figures)) for figures, keys in groups.items())


def rests_of(cid: str, rests_on: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The figures a claim rests on: those of the longest value id its own id is or starts with (at a '.'
    or a '['); none when no value id fits."""
    while True:
        found = rests_on.get(cid)
        if found is not None:
            return tuple(found)
        cut = max(cid.rfind("."), cid.rfind("["))
        if cut <= 0:
            return ()
        cid = cid[:cut]


def rests_match(pattern: str, figure_id: str) -> bool:
    """Whether an id as rests_on names it (the part after '#') names this figure id: '*' stands for any
    text."""
    return _pattern(pattern).fullmatch(figure_id) is not None


@functools.lru_cache(maxsize=1024)
def _pattern(pattern: str) -> re.Pattern:
    return re.compile(".*".join(map(re.escape, pattern.split("*"))), re.S)


def claim_line_once(claim: tuple[str, str]) -> str:
    """One claim as its figures.json line: what json.dumps(sort_keys=True, ensure_ascii=False) writes for
    {"id": ..., "subject": ...}, from the C string escaper."""
    cid, subject = claim
    return f'{{"id": {_string(cid)}, "subject": {_string(subject)}}}'


# A family page states about sixty claims, most of them its neighbours' too. A listing's claims are each
# its own: it uses claim_line_once (180,000 of them kept here were 20 MB).
claim_line = functools.lru_cache(maxsize=65_536)(claim_line_once)
