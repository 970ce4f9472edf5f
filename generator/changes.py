"""Compare the figures of two builds: what a price refresh changed, article by article."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from generator import formatting as fmt
from generator.claims import rests_match, rests_of
from generator.errors import CostpressError


@dataclass
class Change:
    id: str
    unit: str
    old: float | None
    new: float | None
    # what the figure rests on (its inputs), old and new, when both builds name it and it changed: the
    # figure now measures something else ("the cheapest setup's peak against the cheapest hour's", with
    # another setup cheapest), so its move is not a percentage
    rests_on: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    @property
    def share(self) -> float | None:
        if self.old in (None, 0) or self.new is None or self.rests_on is not None:
            return None
        return self.new / self.old - 1


@dataclass
class Claim:
    """A statement whose subject changed: reported as old subject -> new subject, never as a percentage."""

    id: str
    old: str | None
    new: str | None
    # the figures it rests on, as figures.json names them (generator.claims; the new build's, or the old's
    # for a claim the new one lacks), each with how many figures it names changed between the two builds
    rests_on: tuple[tuple[str, int], ...] = ()


@dataclass
class ArticleChanges:
    slug: str
    title: str
    changed: list[Change] = field(default_factory=list)
    added: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    prices_checked: tuple[list[str], list[str]] | None = None
    claims: list[Claim] = field(default_factory=list)
    # "gone": the page has no entry in the new figures.json (a provider dropped its offer, the article was
    # removed or renamed); "new": none in the old one; "moved": it is under another slug there (an article
    # or a family's pattern renamed: the new entry names the old slug among its aliases, or is the only one
    # alike); "" on both sides
    status: str = ""
    answers: bool = False  # a gone or moved page's address still has a page (a notice, an alias)
    moved_to: str = ""  # a moved page's new slug

    @property
    def empty(self) -> bool:
        return not (self.altered or self.moved_to)

    @property
    def altered(self) -> bool:
        """Whether any figure, claim or price date changed (a moved page's may not have)."""
        return bool(self.changed or self.added or self.removed or self.prices_checked or self.claims)

    @property
    def itemized(self) -> bool:
        """Whether its changes are told one by one: a page on both sides, or one that moved and changed."""
        return not self.status or (self.status == "moved" and self.altered)

    @property
    def figures(self) -> int:
        return len(self.changed) + len(self.added) + len(self.removed)


def parse(data: bytes, where: str, read_part=None, written: set[str] | None = None) -> dict:
    """The articles of a figures.json, with those of the parts it names (read_part(rel) -> bytes | None).

    A site's figures.json holds its written articles and names the files that
    hold its page families (figures/<listing>-<n>.json, beside it): each
    listing and its pages. `written` (when given) gets the slugs of the file's
    own articles.
    """
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise CostpressError(f"{where}: not a costpress figures.json (not JSON: {exc})") from None
    except RecursionError:  # the decoder recurses once a level
        raise CostpressError(f"{where}: not a costpress figures.json (nested too deeply to read)") from None
    articles = doc.get("articles") if isinstance(doc, dict) else None
    parts = doc.get("parts", []) if isinstance(doc, dict) else None
    if not isinstance(articles, dict) or not isinstance(parts, list):
        raise CostpressError(
            f"{where}: not a costpress figures.json (expected an object with an 'articles' mapping and a 'parts' list)"
        )
    for slug, entry in articles.items():  # this file's own (each part checks its own)
        problem = _entry_problem(entry)
        if problem is not None:
            raise CostpressError(f"{where}: articles[{slug!r}]{problem}")
    if written is not None:
        written.update(articles)
    for rel in parts:
        if not isinstance(rel, str) or not PART_RE.fullmatch(rel):
            raise CostpressError(f"{where}: parts: expected names like figures/<listing>-1.json, got {rel!r}")
        raw = read_part(rel) if read_part is not None else None
        if raw is None:
            raise CostpressError(f"{where}: part {rel} is missing")
        articles = {**articles, **parse(raw, f"{where} ({rel})")}
    return articles


def _entry_problem(entry) -> str | None:
    """What is wrong with one article's entry, as compare reads it (the rest of its path and what was
    expected), or None: an object whose figures each have a text id and unit and a finite number, whose
    claims each have a text id and subject, whose prices_checked is a list of dates as text, and whose
    aliases (when it has them) a list of addresses."""
    if not isinstance(entry, dict):
        return f": expected an object with title, figures and claims, got {type(entry).__name__}"
    if not isinstance(entry.get("title", ""), str):
        return ".title: expected text"
    figures, claims, checked = entry.get("figures", []), entry.get("claims", []), entry.get("prices_checked", [])
    if not isinstance(figures, list):
        return ".figures: expected a list"
    for i, f in enumerate(figures):
        value = f.get("value") if isinstance(f, dict) else None
        if not (
            isinstance(f, dict)
            and isinstance(f.get("id"), str)
            and isinstance(f.get("unit"), str)
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
            and value == value
            and abs(value) != float("inf")
        ):
            return f".figures[{i}]: expected an object with a text id and unit and a finite number value"
    if not isinstance(claims, list):
        return ".claims: expected a list"
    for i, c in enumerate(claims):
        if not (isinstance(c, dict) and isinstance(c.get("id"), str) and isinstance(c.get("subject"), str)):
            return f".claims[{i}]: expected an object with a text id and subject"
    if not (isinstance(checked, list) and all(isinstance(d, str) for d in checked)):
        return ".prices_checked: expected a list of dates"
    rests = entry.get("rests_on", [])
    if not isinstance(rests, list):
        return ".rests_on: expected a list"
    for i, g in enumerate(rests):
        if not (isinstance(g, dict) and _texts(g.get("claims")) and _texts(g.get("figures"))):
            return f".rests_on[{i}]: expected an object with lists of texts 'claims' and 'figures'"
    aliases = entry.get("aliases", [])
    if not (isinstance(aliases, list) and all(isinstance(a, str) for a in aliases)):
        return ".aliases: expected a list of addresses"
    return None


def _texts(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


PART_RE = re.compile(r"figures/[a-z0-9][a-z0-9-]*-[0-9]+\.json")


# What --ref may be: a revision git reads as one (HEAD~2, main, v1.0, a commit, origin/main@{1}); not one that
# starts with '-', which `git show` would read as an option (--output=FILE writes a file), nor one with a ':'
# (it would name a path in the revision) or white space.
REF_RE = re.compile(r"[^-:\s\x00-\x1f\x7f][^:\s\x00-\x1f\x7f]*")


def at_ref(ref: str, path: Path) -> bytes | None:
    """figures.json as committed at a git ref; None when the file did not exist there."""
    if not REF_RE.fullmatch(ref):
        raise CostpressError(f"--ref: expected a git revision such as HEAD, main or a commit, got {ref!r}")
    path = path.resolve()
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=path.parent if path.parent.exists() else None,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise CostpressError(f"{path}: not inside a git work tree; pass --old FILE instead of --ref") from None
    rel = path.relative_to(Path(top).resolve()).as_posix()
    done = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=top, capture_output=True)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        if message and ("does not exist" in message[-1] or "exists on disk, but not in" in message[-1]):
            return None
        raise CostpressError(f"git show {ref}:{rel}: {message[-1] if message else 'failed'}")
    return done.stdout


def compare(old: dict, new: dict, answers=lambda slug: False, first=frozenset()) -> list[ArticleChanges]:
    """Per-article lists of changed, added and removed figures, sorted by slug and id: the pages in `first`
    (the written articles: parse(written=...)) before the others (the page families' listings and pages).

    answers(slug): whether the new site still has a page at the address of a page the new figures lack.
    A page only the old figures have moved when a page only the new figures have names its slug among its
    aliases (whatever else changed), or when its entry (title, figures, claims, price dates) is the same as
    that of one page only the new figures have, and of no other: it is reported once, under its old slug,
    with what changed between the two entries."""
    out = []
    moves = _moves(old, new)
    arrived = set(moves.values())
    for slug in sorted(set(old) | set(new), key=lambda slug: (slug not in first, slug)):
        if slug in arrived:  # (told under its old slug)
            continue
        o, n = old.get(slug, {}), new.get(moves.get(slug, slug), {})
        art = ArticleChanges(slug, n.get("title") or o.get("title") or slug)
        if slug in moves:
            art.status, art.answers, art.moved_to = "moved", bool(answers(slug)), moves[slug]
        elif slug not in new:
            art.status, art.answers = "gone", bool(answers(slug))
        elif slug not in old:
            art.status = "new"
        of = {f["id"]: f for f in o.get("figures", [])}
        nf = {f["id"]: f for f in n.get("figures", [])}
        for fid in sorted(set(of) | set(nf)):
            a, b = of.get(fid), nf.get(fid)
            if a and b:
                if a["value"] != b["value"]:
                    was, now = tuple(a.get("inputs") or ()), tuple(b.get("inputs") or ())
                    rests_on = (was, now) if was and now and was != now else None
                    art.changed.append(Change(fid, b["unit"], a["value"], b["value"], rests_on))
            elif b:
                art.added.append(Change(fid, b["unit"], None, b["value"]))
            else:
                art.removed.append(Change(fid, a["unit"], a["value"], None))
        if o.get("prices_checked") != n.get("prices_checked"):
            art.prices_checked = (o.get("prices_checked") or [], n.get("prices_checked") or [])
        oc = {c["id"]: c["subject"] for c in o.get("claims", [])}
        nc = {c["id"]: c["subject"] for c in n.get("claims", [])}
        rests = (_rests_map(o), _rests_map(n))
        for cid in sorted(set(oc) | set(nc)):
            if oc.get(cid) != nc.get(cid):
                on = rests_of(cid, rests[1]) if cid in nc else rests_of(cid, rests[0])
                art.claims.append(Claim(cid, oc.get(cid), nc.get(cid), tuple((f, 0) for f in on)))
        if not art.empty:
            out.append(art)
    _count_rests(out)
    return out


def _rests_map(entry: dict) -> dict[str, tuple[str, ...]]:
    """An entry's rests_on groups as value id -> figures (generator.claims.rests_of reads it)."""
    return {key: tuple(g["figures"]) for g in entry.get("rests_on", ()) for key in g["claims"]}


def _count_rests(changes: list[ArticleChanges]) -> None:
    """Fill in how many of the figures each changed claim rests on changed, on its own page or the one
    named (a family page's rank rests on its listing's costs); each page and id pattern is matched once."""
    by_slug = {}
    for art in changes:
        by_slug[art.slug] = art
        if art.moved_to:
            by_slug[art.moved_to] = art
    counted: dict[tuple[str, str], int] = {}
    for art in changes:
        for claim in art.claims:
            found = []
            for figures, _ in claim.rests_on:
                page, _, pattern = figures.partition("#")
                page = page or art.slug
                n = counted.get((page, pattern))
                if n is None:
                    other = by_slug.get(page)
                    ids = [c.id for c in (*other.changed, *other.added, *other.removed)] if other else ()
                    n = counted[(page, pattern)] = sum(rests_match(pattern, fid) for fid in ids)
                found.append((figures, n))
            claim.rests_on = tuple(found)


def _moves(old: dict, new: dict) -> dict[str, str]:
    """Old slug -> new slug for each page only the old figures have that a page only the new ones have names
    among its aliases (the first to name it), and then for each other page only one side has whose entry is
    the same as one, and only one, on the other side."""
    gone, arrived = old.keys() - new.keys(), new.keys() - old.keys()
    moves: dict[str, str] = {}
    for slug in sorted(arrived):
        for alias in new[slug].get("aliases", ()):
            if alias in gone and alias not in moves:
                moves[alias] = slug
    taken = set(moves.values())
    sides = []
    for these, only in ((old, gone - moves.keys()), (new, arrived - taken)):
        alike: dict[str, list[str]] = {}
        for slug in only:
            alike.setdefault(json.dumps(these[slug], sort_keys=True), []).append(slug)
        sides.append(alike)
    for key, slugs in sides[0].items():
        if len(slugs) == 1 == len(sides[1].get(key, ())):
            moves[slugs[0]] = sides[1][key][0]
    return moves


def show(value: float | None, unit: str) -> str:
    if value is None:
        return "none"
    if unit.startswith("USD"):
        return fmt.usd(value) + unit[3:]
    if unit == "hours":
        return f"{fmt.number(value, 2)} hours"
    if unit == "share":
        return fmt.pct(value, 1)
    if unit == "ratio":
        return fmt.ratio(value, 3)
    text = fmt._trim(fmt.dround(value, 4))
    return text if unit == "number" else f"{text} {unit}"


def _pct(change: Change) -> str:
    if change.rests_on is not None:
        return f" ({_rests_on(change)})"
    return "" if change.share is None else f" ({change.share * 100:+.1f}%)"


def _rests_on(change: Change) -> str:
    """A figure that now rests on other inputs, in a few words: "now of A and B, was of C and D"."""
    was, now = (" and ".join(side) for side in change.rests_on)
    return f"now of {now}, was of {was}"


# Claims that say which setup a page ranks first: the summary line counts their moves.
LEADING = ("cheapest", "best", "leader", "recommended", "winner")


def summary(changes: list[ArticleChanges]) -> str:
    """One line: how many pages, figures and claims changed, and the commonest change of a page's leader."""
    if not changes:
        return "No figure or claim changed."
    figures = sum(a.figures for a in changes)
    claims = sum(len(a.claims) for a in changes)
    moves: dict[tuple[str, str], set[str]] = {}
    for art in changes:
        for c in art.claims:
            last = c.id.rsplit(".", 1)[-1]
            if c.old and c.new and any(word in c.id for word in LEADING) and last in ("label", "cheapest_per_token"):
                moves.setdefault((c.old, c.new), set()).add(art.slug)
    line = f"{_count(len(changes), 'page')}, {_count(figures, 'figure')}, {_count(claims, 'claim')} changed"
    dated = sum(a.prices_checked is not None for a in changes)
    if dated:  # (prices checked anew at the same figures change the page too)
        line += f"; prices checked anew on {_count(dated, 'page')}"
    for status, what, address in (("gone", "no longer priced", "address"), ("moved", "moved", "old address")):
        these = [a for a in changes if a.status == status]
        if these:
            kept = sum(a.answers for a in these)
            line += (
                f"; {_count(len(these), 'page')} {what} ({kept} {'keeps its' if kept == 1 else 'keep their'} {address})"
            )
    added = sum(a.status == "new" for a in changes)
    if added:
        line += f"; {_count(added, 'page')} newly priced"
    if moves:
        (old, new), pages = max(moves.items(), key=lambda kv: (len(kv[1]), kv[0]))
        line += f"; cheapest on {_count(len(pages), 'page')}: {old} → {new}"
    return line + "."


def _count(n: int, word: str) -> str:
    return fmt.count(n, word, grouped=False)


def _whole(art: ArticleChanges, code=str) -> str:
    """What happened to a page that is only on one side, in a few words (`code` marks a slug up)."""
    if art.status == "new":
        return f"newly priced, {_count(len(art.added), 'figure')}, {_count(len(art.claims), 'claim')}"
    if art.status == "moved":
        where = "its old address still leads to a page" if art.answers else "its old address is gone"
        if not art.altered:
            return f"moved to {code(art.moved_to)}, nothing else changed; {where}"
        return f"moved to {code(art.moved_to)}, {_altered(art)}; {where}"
    where = "its address now shows a notice or a redirect" if art.answers else "its address is gone"
    removed = f"{_count(len(art.removed), 'figure')} and {_count(len(art.claims), 'claim')} removed"
    return f"no longer priced, {removed}; {where}"


def _altered(art: ArticleChanges) -> str:
    """How many of a moved page's figures and claims changed, in a few words."""
    what = [f"{_count(len(art.changed) + len(art.added) + len(art.removed), 'figure')}"]
    what += [_count(len(art.claims), "claim")]
    if art.prices_checked:
        what.append("its price dates")
    return fmt.series(what) + " changed"


def render_text(changes: list[ArticleChanges]) -> str:
    """The summary, then each page with its changed figures and claims; a page only on one side (but one
    that moved and changed) is one line."""
    lines = [summary(changes)]
    for art in changes:
        if not art.itemized:
            lines.append(f"{art.slug}: {_whole(art)}")
            continue
        moved = f"moved to {art.moved_to} ({'old address kept' if art.answers else 'old address gone'}), "
        lines.append(
            f"{art.slug}: {moved if art.status else ''}{len(art.changed)} changed, {len(art.added)} added, "
            f"{len(art.removed)} removed, {_count(len(art.claims), 'claim')}"
        )
        if art.prices_checked:
            lines.append(
                f"  prices checked: {', '.join(art.prices_checked[0]) or 'none'} -> "
                f"{', '.join(art.prices_checked[1]) or 'none'}"
            )
        for c in art.changed:
            lines.append(f"  {c.id}: {show(c.old, c.unit)} -> {show(c.new, c.unit)}{_pct(c)}")
        for c in art.added:
            lines.append(f"  + {c.id}: {show(c.new, c.unit)}")
        for c in art.removed:
            lines.append(f"  - {c.id}: {show(c.old, c.unit)}")
        for c in art.claims:
            rests = f"; rests on {_rests(c.rests_on)}" if c.rests_on else ""
            lines.append(f"  claim {c.id}: {c.old if c.old is not None else '(none)'} -> {c.new or '(gone)'}{rests}")
    return "\n".join(lines) + "\n"


def _rests(rests_on: tuple[tuple[str, int], ...], code=str) -> str:
    """The figures a claim rests on, each with how many of those it names changed: "#reference.cost (1
    changed), listing#m/lora@*.cost (3 changed)" ("#" starts a figure of the page itself)."""
    return ", ".join(code(figures) + (f" ({n} changed)" if n else "") for figures, n in rests_on)


def _code(slug: str) -> str:
    return f"`{slug}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


# A pull request's body opens with the build's warnings: at most this many, each cut to this many characters
WARNINGS_SHOWN, WARNING_CHARS = 20, 300


def _warnings_block(warnings) -> str:
    """The build's warnings, for the top of a Markdown report: a reviewer sees them before merging, and CI's
    build --strict fails on them."""
    if not warnings:
        return ""
    lines = [f"    warning: {w[:WARNING_CHARS]}\n" for w in warnings[:WARNINGS_SHOWN]]
    more = (
        f"\nAnd {_count(len(warnings) - WARNINGS_SHOWN, 'more warning')}.\n" if len(warnings) > WARNINGS_SHOWN else ""
    )
    return (
        "**The build warned** (fix before merging; `costpress build --strict` fails on these):\n\n"
        + "".join(lines)
        + more
        + "\n"
    )


def render_markdown(changes: list[ArticleChanges], limit: int | None = None, warnings=()) -> str:
    """The build's warnings if it gave any, the summary, lists of the pages that left or arrived (a reviewer
    reads that a page left, not each of its figures), then a section for each page priced on both sides,
    pages with the very same changes sharing one (a dropped offer moves "of 65" to "of 64" on a thousand pages).

    limit: at most this many characters (a pull request's body holds 65,536). The sections hold what
    changed, so they come first: each list names its first few pages and counts the rest, a shared section
    names its first few pages, a section that no longer fits is left off whole (a later, shorter one may
    still fit), the lists then name as many more pages as the room left holds, and a last line says how
    many pages were left off."""
    lists = [
        (f"### {heading} ({len(these)})\n\n", [f"- {_cell(a.title)} (`{a.slug}`): {_whole(a, _code)}\n" for a in these],
         [not a.itemized for a in these])  # (a page whose changes are in a section counts as shown there)
        for status, heading in (("gone", "No longer priced"), ("moved", "Moved"), ("new", "Newly priced"))
        if (these := [a for a in changes if a.status == status])
    ]  # fmt: skip
    groups = _same_changes([art for art in changes if art.itemized])
    head = _warnings_block(warnings) + summary(changes) + "\n\n"
    whole = head + "".join(heading + "".join(items) + "\n" for heading, items, _ in lists)
    whole += "".join(_section(group) for group in groups)  # each ends in a blank line
    if limit is None or len(whole) <= limit:
        return whole
    total = len(changes)
    room = limit - len(head) - max(len(_cut_note(total, limit)), len(_cut_note(0, limit)))
    ends = [list(itertools.accumulate(map(len, items), initial=0)) for _, items, _ in lists]

    def size(k: int, n: int) -> int:  # list k with its first n pages named
        return len(lists[k][0]) + ends[k][n] + len(_more(len(lists[k][1]) - n)) + 1  # (a blank line ends it)

    named = [0] * len(lists)
    for k, (_, items, _) in enumerate(lists):  # each list's first pages, as many as fit
        n = min(NAMED, len(items))
        while n and size(k, n) > room:
            n -= 1
        if n:
            named[k], room = n, room - size(k, n)
    sections = []
    for group in groups:  # one that does not fit is left off; a later, shorter one may fit
        section = _section(group, names=NAMED)
        if len(section) <= room:
            sections.append(section)
            room -= len(section)
            total -= len(group)
    for k, (_, items, _) in enumerate(lists):  # then more of each list's pages, in order, while there is room
        while named[k] and named[k] < len(items) and size(k, named[k] + 1) - size(k, named[k]) <= room:
            room -= size(k, named[k] + 1) - size(k, named[k])
            named[k] += 1
    out = [head]
    for (heading, items, counted), n in zip(lists, named, strict=True):
        if n:
            out.append(heading + "".join(items[:n]) + _more(len(items) - n) + "\n")
            total -= sum(counted[:n])
    return "".join(out + sections) + _cut_note(total, limit)


def _more(n: int) -> str:
    """The line that ends a list cut short in a cut report: how many of its pages it does not name."""
    return f"- and {n} more\n" if n else ""


NAMED = 10  # the pages a list or a shared section names first in a cut report


def _same_changes(arts: list[ArticleChanges]) -> list[list[ArticleChanges]]:
    """The pages in groups with the very same price dates, figure changes and claim changes, each group
    where its first page is."""
    groups: dict[tuple, list[ArticleChanges]] = {}
    for art in arts:
        key = (art.prices_checked and tuple(map(tuple, art.prices_checked)),
               *(tuple((c.id, c.unit, c.old, c.new, c.rests_on) for c in these)
                 for these in (art.changed, art.added, art.removed)),
               # (the figures a claim rests on may be named otherwise on each page, a family page's its own
               # model's: pages share a section when as many of them changed)
               tuple((c.id, c.old, c.new, tuple(n for _, n in c.rests_on)) for c in art.claims))  # fmt: skip
        groups.setdefault(key, []).append(art)
    return list(groups.values())


def _cut_note(left: int, limit: int) -> str:
    """The last line of a cut report: how many pages it left off, or (none) that it named only the first
    pages of a shared section."""
    what = f"{_count(left, 'more page')} left off" if left else f"Shared sections name their first {NAMED} pages"
    return f"_{what}: this report stops at {limit} characters (`--max-chars`); without it every page is named._\n"


def _section(group: list[ArticleChanges], names: int | None = None) -> str:
    """Pages priced before and after with the same changes: their price dates, figures and claims, as
    Markdown tables, under the page's title (one page) or a count and the pages' slugs (the first `names`)."""
    art = group[0]
    if len(group) == 1:
        where = f"`{art.moved_to}`, moved from `{art.slug}`" if art.status else f"`{art.slug}`"
        out = [f"### {_cell(art.title)} ({where})", ""]
    else:
        shown = group if names is None else group[:names]
        more = f", and {len(group) - len(shown)} more" if len(shown) < len(group) else ""
        out = [f"### The same changes on {len(group)} pages", "",
               "Pages: " + ", ".join(map(_named, shown)) + more + ".", ""]  # fmt: skip
    if art.prices_checked:
        out += [
            f"Prices checked: {', '.join(art.prices_checked[0]) or 'none'} → "
            f"{', '.join(art.prices_checked[1]) or 'none'}",
            "",
        ]
    if art.figures:
        out += ["| figure | old | new | change |", "|---|---:|---:|---:|"]
        for c in art.changed:
            share = _cell(_rests_on(c)) if c.rests_on else "" if c.share is None else f"{c.share * 100:+.1f}%"
            out.append(f"| `{c.id}` | {_cell(show(c.old, c.unit))} | {_cell(show(c.new, c.unit))} | {share} |")
        for c in art.added:
            out.append(f"| `{c.id}` | (new) | {_cell(show(c.new, c.unit))} | added |")
        for c in art.removed:
            out.append(f"| `{c.id}` | {_cell(show(c.old, c.unit))} | (gone) | removed |")
        out.append("")
    if art.claims:
        # what the claims rest on, told once below the table for each set of figures, by a letter
        notes = {r: _letter(n) for n, r in enumerate(dict.fromkeys(c.rests_on for c in art.claims if c.rests_on))}
        out += (
            ["| claim | was | now | rests on |", "|---|---|---|---|"]
            if notes
            else ["| claim | was | now |", "|---|---|---|"]
        )
        for c in art.claims:
            note = f" {notes.get(c.rests_on, '')} |" if notes else ""
            out.append(f"| `{c.id}` | {_cell(c.old or '(none)')} | {_cell(c.new or '(gone)')} |{note}")
        out.append("")
        # a set of figures another page of the section names otherwise (its own model's, say)
        apart = {c.rests_on for n, c in enumerate(art.claims) for o in group[1:] if o.claims[n].rests_on != c.rests_on}
        for rests, letter in notes.items():
            each = (
                "; these are the first page's: each of the others names its own, with as many changed"
                if rests in apart
                else ""
            )
            out.append(f"- {letter}: {_rests(rests, _code)}{each}")
        if notes:
            out.append("")
    return "\n".join(out) + "\n"


def _letter(n: int) -> str:
    """a, b, ..., z, aa, ab, ...: the notes of a section's claims table."""
    return (_letter(n // 26 - 1) if n >= 26 else "") + chr(ord("a") + n % 26)


def _named(art: ArticleChanges) -> str:
    """A page's slug in a section's list, marked up; a moved page's new one, and where it was."""
    return f"`{art.moved_to}` (moved from `{art.slug}`)" if art.status else f"`{art.slug}`"


def render_json(changes: list[ArticleChanges], warnings=()) -> str:
    """{"summary": ..., "changes": [{page, id, kind, old, new}]}: figures, claims and price dates (a moved
    page's under its new slug)."""
    rows = []
    for art in changes:
        page = art.moved_to or art.slug  # (a moved page's changes are under its new slug)
        if art.prices_checked:
            rows.append({"page": page, "id": "prices_checked", "kind": "prices_checked",
                         "old": art.prices_checked[0], "new": art.prices_checked[1]})  # fmt: skip
        for c in [*art.changed, *art.added, *art.removed]:
            row = {"page": page, "id": c.id, "kind": "figure", "old": c.old, "new": c.new, "unit": c.unit}
            if c.rests_on is not None:  # another subject: no percentage applies
                row["was_of"], row["now_of"] = map(list, c.rests_on)
            rows.append(row)
        for c in art.claims:
            row = {"page": page, "id": c.id, "kind": "claim", "old": c.old, "new": c.new}
            if c.rests_on:  # each with how many of the figures it names changed
                row["rests_on"] = [{"figures": figures, "changed": n} for figures, n in c.rests_on]
            rows.append(row)
    doc = {
        "summary": summary(changes),
        "pages": len(changes),
        "gone": [{"page": a.slug, "address_kept": a.answers} for a in changes if a.status == "gone"],
        "moved": [
            {"page": a.slug, "to": a.moved_to, "address_kept": a.answers} for a in changes if a.status == "moved"
        ],
        "new": [a.slug for a in changes if a.status == "new"],
        "figures": sum(a.figures for a in changes),
        "claims": sum(len(a.claims) for a in changes),
        "changes": rows,
        "warnings": list(warnings),  # the fresh build's (none when the new side is a file)
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
