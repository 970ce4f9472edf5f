"""The typed, immutable records content/ is read into: hardware, models, methods, prices, benchmarks,
articles, and the catalog that holds them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.engine.architecture import Architecture
from generator.schema import Doc


@dataclass(frozen=True)
class PriceGuard:
    """How far a price may move between snapshots before someone must confirm it."""

    max_change: float = 0.5
    min_usd_per_gpu_hour: float = 0.05


@dataclass(frozen=True)
class Site:
    title: str
    description: str
    base_url: str
    author: str
    publisher: str
    language: str
    locale: str = "en-US"
    price_guard: PriceGuard = PriceGuard()
    planning_utilization: float = 0.3
    stale_after_days: int = 180
    search: bool = False


@dataclass(frozen=True)
class Gpu:
    id: str
    name: str
    short_name: str
    peak_tflops: float
    peak_source: str
    peak_url: str | None
    memory_gb: float
    memory_source: str
    memory_url: str | None
    notes: str | None = None
    catalog_names: tuple[str, ...] | None = None
    catalog_instances: tuple[str, ...] | None = None
    result_names: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Model:
    id: str
    name: str
    parameters: int  # the total: computed from the architecture where there is one
    weights_gb: float | None
    source: str
    url: str | None
    architecture: Architecture | None = None
    published_parameters: int | None = None

    @property
    def active_parameters(self) -> int:
        """Parameters one token passes through: what training operations count (all, for a dense model)."""
        arch = self.architecture
        return arch.parameters(active=True) if arch is not None and arch.moe else self.parameters


@dataclass(frozen=True)
class Method:
    id: str
    name: str
    family: str
    forward: float
    recompute: float
    backward: float
    source: str
    url: str | None
    training: tuple | None = None  # (key, value) pairs of the methods.yaml training block

    @property
    def ops_per_param(self) -> float:
        return self.forward + self.recompute + self.backward


@dataclass(frozen=True)
class Evaluation:
    forward: float
    source: str
    url: str | None


@dataclass(frozen=True)
class Memory:
    model: str
    method: str
    gb: float
    sequence_length: int
    source: str
    url: str | None


@dataclass(frozen=True)
class Benchmark:
    id: str
    model: str
    method: str
    label: str | None
    gpu: str
    count: int
    tokens_per_second: float
    sequence_length: int | None
    batch_size: int | None
    steps: int | None
    framework: str | None
    definition: str
    notes: str | None
    source: str
    url: str | None
    acknowledged: str | None = None


@dataclass(frozen=True)
class Result:
    """One system's published time to train a suite's fixed amount of work."""

    system: str
    submitter: str
    round: str
    gpu: str
    count: int
    minutes: float
    availability: str | None
    url: str | None
    acknowledged: str | None
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Suite:
    """A benchmark with a fixed workload and the time-to-train results published for it."""

    id: str
    name: str
    model: str
    method: str
    sequence_length: int
    sequence_source: str
    sequence_url: str | None
    samples: float
    samples_source: str
    samples_url: str | None
    definition: str
    notes: str | None
    source: str
    url: str | None
    file: str
    results: tuple[Result, ...]

    @property
    def tokens(self) -> float:
        """Training tokens in one run: samples × sequence length."""
        return self.samples * self.sequence_length


class property_once:  # noqa: N801 (used like functools.cached_property)
    """A value made from an instance the first time it is read, then held in the instance's __dict__ (which a
    non-data descriptor gives way to): functools.cached_property less the lock it takes on every first read."""

    def __init__(self, make, name: str) -> None:
        self.make, self.name = make, name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.make(obj)
        return value


# Not frozen, though nothing changes an offer once it is made (and hashed by its fields as a frozen one is):
# a frozen dataclass sets each field through object.__setattr__, 1.7 µs an offer against 0.3 µs, and a build
# makes every offer of every snapshot (45,400 at 100,000 pages) or reads them from the parse cache.
@dataclass(unsafe_hash=True)
class Offer:
    provider: str
    provider_name: str
    checked: dt.date
    source: str
    url: str | None
    gpu: str
    count: int
    usd_per_hour: float
    spot_usd_per_hour: float | None
    region: str | None
    instance_type: str | None
    notes: str | None
    confirmed: bool
    file: str
    line: int | None = field(default=None, compare=False)
    gpu_memory_gb: float | None = None  # what the provider's catalog says each GPU has
    imported: bool = False  # `checked` is a catalog's import date, not when its prices were read

    @property
    def date_phrase(self) -> str:
        """How a page names the offer's date: read, or only imported from a catalog."""
        day = self.checked.isoformat()
        if self.imported:
            return f"prices imported {day} from a catalog that does not record when they were read"
        return f"prices checked {day}"

    # made once per offer, as functools.cached_property would, without its lock (2 µs an offer: a price refresh
    # reads the key of all 4,540 offers of the benchmark once, a family twice per combination)
    key = property_once(lambda self: offer_key(self.provider, self.gpu, self.count), "key")


def offer_key(provider: str, gpu: str, count: int) -> str:
    """The reference articles use for an offer: provider:gpuxcount, e.g. nodus:b200x8."""
    return f"{provider}:{gpu}x{count}"


@dataclass(frozen=True)
class Snapshot:
    provider: str
    name: str
    checked: dt.date
    source: str
    url: str | None
    file: str
    offers: tuple[Offer, ...]
    notes: str | None = None
    acknowledged: str | None = None  # why `costpress lint` flags in this snapshot are kept
    imported: bool = False  # `checked` is a catalog's import date, not when its prices were read


# A 100,000-page family holds 100,000 of them in every process. Not frozen, though nothing changes an article
# once it is made: a frozen dataclass sets each field through object.__setattr__, 2.2 µs an article against
# 0.6 µs (a quarter of the time family_pages takes). Like a frozen one with these fields, it cannot be hashed.
@dataclass(slots=True)
class Article:
    file: str
    title: str
    slug: str
    date: dt.date
    description: str
    kind: str
    tags: tuple[str, ...]
    prices_as_of: dt.date | None
    params: Any
    params_doc: Doc = field(compare=False, repr=False)
    sources: tuple[dict, ...]
    faq: tuple[dict, ...]
    attribution: str | None
    body: str
    body_line: int
    # params built by code from an already validated family file, not typed by an author
    params_checked: bool = field(default=False, compare=False, repr=False)
    draft: bool = False
    # A family page's params repeat its family's own parameters (this dict, the same one for all its pages):
    # the page fingerprint digests them once (fingerprints.Fingerprints)
    family_params: dict | None = field(default=None, compare=False, repr=False)
    # And the values of its own parameters, in families.PAGE_INPUTS order (family_pages builds its params from these
    # very values): its fingerprint is made from them, with no walk over the dict (fingerprints.Fingerprints)
    page_inputs: tuple | None = field(default=None, compare=False, repr=False)
    # addresses the page had before, each published as a page that sends the reader on (generator/aliases.py)
    aliases: tuple[str, ...] = ()

    def all_params(self) -> Any:
        """The article's parameters. A family page holds none of its own (`params` is None): they are its
        family's and its page_inputs' (families.page_params), made here when the page renders. A build keeps
        most family pages as they are, and their 10,000 copies of the family's parameters were made for
        nothing (a third of the time it took to make the pages' articles)."""
        if self.params is None and self.page_inputs is not None and self.family_params is not None:
            from generator.families import page_params

            return page_params(self.family_params, self.page_inputs)
        return self.params


@dataclass
class Catalog:
    """Everything content/ holds, validated and cross-checked."""

    root: Path
    site: Site
    gpus: dict[str, Gpu]
    models: dict[str, Model]
    methods: dict[str, Method]
    evaluation: Evaluation
    memory: dict[tuple[str, str], Memory]
    benchmarks: dict[str, Benchmark]
    suites: dict[str, Suite]
    measurements: tuple  # measurements.Measurement, published peak memory with its conditions
    snapshots: dict[str, tuple[Snapshot, ...]]  # provider -> oldest first
    articles: tuple[Article, ...]
    # content/about.md: the about page, plain Markdown (no figures), when the site has one
    about: str | None = field(default=None, repr=False, compare=False)
    # drafts this build leaves out (without --drafts)
    held_drafts: tuple[Article, ...] = field(default=(), repr=False, compare=False)
    held_families: tuple = field(default=(), repr=False, compare=False)  # draft families this build leaves out
    # content/static/'s files as output paths (generator/static.py), published as they are
    static: tuple[str, ...] = ()
    # each snapshot's offers by key, built on first use (a family looks offers up thousands of times)
    _offer_index: dict[int, dict[str, Offer]] = field(default_factory=dict, init=False, repr=False, compare=False)
    # input figures that many pages cite (a model and method's, a GPU's, an offer's), made once per build
    shared_inputs: dict[tuple, list] = field(default_factory=dict, init=False, repr=False, compare=False)

    def snapshot(self, provider: str, as_of: dt.date | None = None) -> Snapshot | None:
        """The newest snapshot of a provider, or the newest on or before as_of."""
        chosen = None
        for snap in self.snapshots.get(provider, ()):
            if as_of is None or snap.checked <= as_of:
                chosen = snap
        return chosen

    def offered_elsewhere(self, key: str, as_of: dt.date | None = None) -> str:
        """For an offer key no snapshot lists: the other providers' offers of the GPU it names, as what the
        error suggests ("; l40s elsewhere: nebius:l40sx1, ..."), or nothing."""
        provider, _, rest = key.partition(":")
        gpu = rest.rpartition("x")[0]
        snaps = [self.snapshot(p, as_of) for p in self.snapshots if p != provider]
        keys = sorted(o.key for snap in snaps if snap is not None for o in snap.offers if o.gpu == gpu)
        return f"; {gpu} elsewhere: {', '.join(keys)}" if keys else ""

    def offer(self, key: str, as_of: dt.date | None = None) -> Offer | None:
        provider = key.split(":", 1)[0]
        snap = self.snapshot(provider, as_of)
        if snap is None:
            return None
        index = self._offer_index.get(id(snap))
        if index is None:
            index = self._offer_index[id(snap)] = {}
            for offer in snap.offers:
                index.setdefault(offer.key, offer)  # the first of two equal keys, as a scan would find
        return index.get(key)
