"""`costpress new article` and `new family`: a new article or page family source from a short template."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from generator import formatting as fmt
from generator.authored import write_created
from generator.errors import CostpressError
from generator.escape import yaml_scalar
from generator.schema import NAME_MAX, is_name
from generator.theme import SCAFFOLDS


def _check_place(content: Path, slug: str) -> None:
    """Refuse a slug that cannot name a file, and a folder that is not a site's content."""
    if not is_name(slug, "slug"):
        shown = slug if len(slug) <= NAME_MAX else f"{slug[:NAME_MAX]}... ({len(slug)} characters)"
        raise CostpressError(
            f"slug: expected at most {NAME_MAX} lower-case letters, digits and single '-', got {shown!r}"
        )
    if not (content / "site.yaml").is_file():  # a typo in --content, or run outside the site: made a new tree
        raise CostpressError(
            f"{content}: not a content folder (no site.yaml in it); pass the site's --content, or make a new site"
            " with 'costpress init DIR'"
        )


def _refuse_a_taken_slug(content: Path, slug: str, cat=None, families=None) -> None:
    """Refuse a slug that an article, a family's listing or one of the build's own folders has already: the
    build would refuse the pair. Content that does not load is the build's to report (no check then)."""
    from generator.errors import ContentError
    from generator.families import load_families
    from generator.load import load_content
    from generator.sitefiles import reserved_folders

    if cat is None:
        try:
            cat = load_content(content)
        except ContentError:
            return
    owners = {name: f"the site's {what}" for name, what in reserved_folders(cat).items()}
    owners |= {a.slug: a.file for a in cat.articles}
    families = load_families(content, []) if families is None else families  # one with a problem: the build's
    owners |= {f.data["listing"]["slug"]: f"{f.file} (its listing)" for f in families}
    if slug in owners:
        raise CostpressError(f"slug: {slug!r} is already used by {owners[slug]}; choose another")


def scaffold(content: Path, slug: str, kind: str, day: dt.date) -> Path:
    """Write content/articles/<slug>.md for a kind; refuse bad slugs, slugs in use and existing files."""
    _check_place(content, slug)
    source = SCAFFOLDS / f"{kind}.md"
    if not source.is_file():
        raise CostpressError(f"{source}: no article template for kind {kind!r}")
    target = content / "articles" / f"{slug}.md"
    if target.exists():
        raise CostpressError(f"{target}: already exists")
    _refuse_a_taken_slug(content, slug)
    title = slug.replace("-", " ").capitalize()
    text = source.read_text().replace("__SLUG__", slug).replace("__DATE__", day.isoformat()).replace("__TITLE__", title)
    write_created(target, text)
    return target


def scaffold_family(
    content: Path,
    slug: str,
    day: dt.date,
    models: tuple[str, ...],
    methods: tuple[str, ...],
    providers: tuple[str, ...],
) -> tuple[Path, str]:
    """Write content/families/<slug>.md, a family of the given models on the given (default: every trainable)
    methods and (default: every) provider; refuse ids the content does not have, and models whose pages another
    family with the same page.slug already makes. Returns the file and what it covers, in words."""
    from generator.families import load_families
    from generator.load import load_content

    _check_place(content, slug)
    target = content / "families" / f"{slug}.md"
    if target.exists():
        raise CostpressError(f"{target}: already exists")
    cat = load_content(content)  # content with a problem stops here, with its problems
    others = load_families(content, [])  # one with a problem is the build's to report
    _refuse_a_taken_slug(content, slug, cat, others)
    axes = _family_axes(cat, models, methods, providers)
    text = (SCAFFOLDS / "family.md").read_text()
    _refuse_pages_made_elsewhere(others, axes, _page_slug_pattern(text))
    text = text.replace("__SLUG__", slug).replace("__DATE__", day.isoformat())
    text = text.replace("__TITLE__", slug.replace("-", " ").capitalize())
    for key, values in zip(("__MODELS__", "__METHODS__", "__PROVIDERS__"), axes, strict=True):
        text = text.replace(key, "[" + ", ".join(yaml_scalar(v) for v in values) + "]")
    write_created(target, text)
    return target, _covers(cat, axes)


def _family_axes(cat, models, methods, providers) -> tuple[tuple[str, ...], ...]:
    """The family's models, methods and providers: each named once, the defaults filled in, every one known."""
    models, methods, providers = (tuple(dict.fromkeys(v)) for v in (models, methods, providers))
    methods = methods or tuple(k for k, m in cat.methods.items() if m.training)
    providers = providers or tuple(sorted(cat.snapshots))
    for option, given, known in (("--model", models, cat.models), ("--method", methods, cat.methods),
                                 ("--provider", providers, cat.snapshots)):  # fmt: skip
        for name in given:
            if name not in known:
                raise CostpressError(f"{option}: unknown {option[2:]} {name!r}; known: {', '.join(sorted(known))}")
    return models, methods, providers


def _page_slug_pattern(scaffold_text: str) -> str:
    return next(
        line.split(": ", 1)[1].strip('"') for line in scaffold_text.splitlines() if line.startswith('  slug: "{')
    )


def _refuse_pages_made_elsewhere(others, axes, pattern: str) -> None:
    """Refuse models whose pages a family with the same page.slug pattern makes already (the build would refuse
    every page twice)."""
    models, methods, providers = axes
    for other in others:
        theirs = other.data["axes"]
        shared = [m for m in models if m in theirs["models"]]
        if other.data["page"]["slug"] == pattern and shared and set(methods) & set(theirs["methods"]) and \
                set(providers) & set(theirs["providers"]):  # fmt: skip
            them = "it" if len(shared) == 1 else "them"
            raise CostpressError(
                f"--model: {other.file} already makes the pages of {', '.join(shared)} (its page.slug is the one "
                f"a new family gets); add to that family's axes instead, or leave {them} out"
            )


def _covers(cat, axes) -> str:
    """What a family of these axes covers, in words: "1 model (x) × 4 methods (...) × ...: N combinations of
    model, method and offer; M hold the job, a page each" (with the newest prices, as the build takes them)."""
    from generator.scenarios import setup_row

    models, methods, providers = axes
    offers = [o for p in providers for o in cat.snapshots[p][-1].offers]
    words = ("model", "method", "provider")
    parts = [f"{fmt.count(len(v), word)} ({', '.join(v)})" for word, v in zip(words, axes, strict=True)]
    memo: dict = {}  # a job's fit on a GPU type and count, worked out once across providers (as a family does)
    fitting = sum(
        bool(setup_row(cat, cat.models[m], cat.methods[t], o, memo=memo)["fits"])
        for m in models
        for t in methods
        for o in offers
    )
    if not fitting:
        held = "none holds the job: the listing will say so, and no page is made"
    else:
        held = f"{fitting:,} {'holds' if fitting == 1 else 'hold'} the job, a page each"
    combinations = len(models) * len(methods) * len(offers)
    return f"{' × '.join(parts)}: {combinations:,} combinations of model, method and offer; {held}"
