"""Read and validate everything under content/ into typed, immutable records."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from pathlib import Path
from typing import Any

from generator import measurements, parseahead, static
from generator.engine.architecture import Architecture
from generator.errors import ContentError
from generator.records import (
    Article,
    Benchmark,
    Catalog,
    Evaluation,
    Gpu,
    Memory,
    Method,
    Model,
    Offer,
    PriceGuard,
    Result,
    Site,
    Snapshot,
    Suite,
)
from generator.schema import Doc, F, parse_yaml, read_text, validate
from generator.specs import (
    ARCHITECTURE,
    ARTICLE,
    BENCHMARK_FILE,
    BENCHMARKS,
    HARDWARE,
    METHODS,
    MODELS,
    SITE,
    SNAPSHOT,
)
from generator.state import odd_inputs


def display_path(path: Path) -> str:
    """Show a path relative to the working directory when it lies inside it, else as an absolute path
    (`--content /srv/data` run from a repository reads /srv/data/..., not ../../srv/data/...)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return os.path.abspath(path)
    return rel


def _load_doc(path: Path, problems: list[str], parsed=None) -> Doc | None:
    """A YAML file of content/ as a Doc (None when missing, unreadable or empty), its problems added to
    `problems`; with `parsed` (a parsecache.ParseCache), a text the last build parsed is not parsed again."""
    display = display_path(path)
    if not path.exists():
        problems.append(f"{display}: file is missing")
        return None
    text = read_text(path, display, problems)
    if text is None:
        return None
    doc = parsed.parse(text, display) if parsed is not None else parse_yaml(text, display)
    problems.extend(doc.problems)
    doc.problems = problems  # later problems go straight to the shared list
    return None if doc.data is None else doc


def _records(doc: Doc | None, spec: F) -> dict | None:
    if doc is None:
        return None
    return validate(doc, doc.data, spec)


def _index(doc: Doc, items: list, key: str, cls: type, listname: str) -> dict:
    out: dict[str, Any] = {}
    for i, item in enumerate(items or []):
        if not item or item.get(key) is None:
            continue
        if item[key] in out:
            doc.problem((listname, i, key), f"duplicate id {item[key]!r}")
            continue
        out[item[key]] = cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in item.items()})
    return out


FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*\n", re.S)


def load_content(root: Path, parsed=None) -> Catalog:
    """Load and validate all of content/; raise ContentError listing every problem.

    With `parsed` (a parsecache.ParseCache), a YAML file whose text the last
    build parsed is not parsed again.
    """
    load_doc = functools.partial(_load_doc, parsed=parsed)
    problems: list[str] = []
    if not root.is_dir():
        raise ContentError([f"{display_path(root)}: content folder not found"])
    odd = odd_inputs(root, "content")
    if odd:  # before reading anything: a pipe would block the build
        raise ContentError([display_path(Path(line.split(": ", 1)[0])) + ": " + line.split(": ", 1)[1] for line in odd])

    site_doc = load_doc(root / "site.yaml", problems)
    site = _records(site_doc, SITE)
    hw_doc = load_doc(root / "hardware.yaml", problems)
    hw = _records(hw_doc, HARDWARE)
    models_doc = load_doc(root / "models.yaml", problems)
    models_raw = _records(models_doc, MODELS)
    methods_doc = load_doc(root / "methods.yaml", problems)
    methods_raw = _records(methods_doc, METHODS)
    bench_doc = load_doc(root / "benchmarks.yaml", problems)
    bench_raw = _records(bench_doc, BENCHMARKS)
    extra_docs, suite_docs = _benchmark_files(root / "benchmarks", problems, load_doc)

    gpus = _index(hw_doc, hw["gpus"], "id", Gpu, "gpus") if hw else {}
    broken: set[str] = set()  # models whose architecture block has a problem, reported where it is written
    models = _models(models_doc, models_raw["models"], broken) if models_raw else {}
    methods, memory, evaluation = _methods(methods_doc, methods_raw, models, models_raw is not None)
    loaded = {"model": models_raw is not None, "method": methods_raw is not None, "gpu": hw is not None}
    bench_docs = ([(bench_doc, bench_raw)] if bench_raw else []) + extra_docs
    benchmarks = _benchmarks(bench_docs, {"model": models, "method": methods, "gpu": gpus}, loaded)
    suites = _suites(suite_docs, models, methods, gpus, loaded)
    measured = measurements.load(root / "measurements", models if models_raw else {}, problems, load_doc, broken)

    snapshots = _load_snapshots(root / "prices", gpus if hw else None, problems, load_doc, parsed)
    guard = PriceGuard(**{k: v for k, v in ((site or {}).get("price_guard") or {}).items() if v is not None})
    problems.extend(check_prices(snapshots, guard))
    articles = _load_articles(root / "articles", problems)
    _check_slugs(articles, problems)

    about = _about(root, problems)
    own = static.paths(root, problems, display_path(root / static.FOLDER))
    if problems:
        raise ContentError(problems)
    assert site and evaluation is not None
    return Catalog(
        root=root,
        site=_site(site, guard),
        gpus=gpus,
        models=models,
        methods=methods,
        evaluation=evaluation,
        memory=memory,
        benchmarks=benchmarks,
        suites=suites,
        measurements=measured,
        about=about,
        static=own,
        snapshots=snapshots,
        articles=tuple(sorted(articles, key=lambda a: a.slug)),
    )


def _site(site: dict, guard: PriceGuard) -> Site:
    """site.yaml's record, with the defaults of the settings it may leave out."""
    return Site(
        **{
            **site,
            "price_guard": guard,
            "stale_after_days": site["stale_after_days"] or 180,
            "planning_utilization": site["planning_utilization"] or 0.3,
            "search": bool(site["search"]),
        }
    )


def _benchmark_files(folder: Path, problems: list[str], load_doc) -> tuple[list, list]:
    """benchmarks/*.yaml (costpress calibrate writes there): the files holding benchmark records, and
    those holding time-to-train suites, each as (doc, records)."""
    extra_docs, suite_docs = [], []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        doc = load_doc(path, problems)
        raw = _records(doc, BENCHMARK_FILE)
        if doc is not None and raw:
            if raw["benchmarks"]:
                extra_docs.append((doc, raw))
            if raw["time_to_train"]:
                suite_docs.append((doc, raw["time_to_train"]))
    return extra_docs, suite_docs


def _methods(doc: Doc | None, raw: dict | None, models: dict, models_loaded: bool):
    """methods.yaml: the methods by id (each training block made hashable), the recorded training-state
    memory by (model, method), and the evaluation settings."""
    methods: dict[str, Method] = {}
    memory: dict[tuple[str, str], Memory] = {}
    if not raw:
        return methods, memory, None
    methods = _index(doc, raw["methods"], "id", Method, "methods")
    for mid, method in methods.items():  # a hashable record of the training block
        if method.training:
            kept = {k: tuple(v) if isinstance(v, list) else v for k, v in method.training.items() if v is not None}
            methods[mid] = dataclasses.replace(method, training=tuple(sorted(kept.items())))
    evaluation = Evaluation(**raw["evaluation"]) if raw["evaluation"] else None
    for i, m in enumerate(raw["memory"] or []):
        if not m or None in (m["model"], m["method"], m["gb"]):
            continue
        path = ("memory", i)
        if m["model"] not in models and models_loaded:
            doc.problem(path + ("model",), _unknown("model", m["model"], models))
        if m["method"] not in methods:
            doc.problem(path + ("method",), _unknown("method", m["method"], methods))
        if (m["model"], m["method"]) in memory:
            doc.problem(path, f"duplicate memory entry for {m['model']} / {m['method']}")
        memory[(m["model"], m["method"])] = Memory(**m)
    return methods, memory, evaluation


def _benchmarks(docs: list, tables: dict[str, dict], loaded: dict[str, bool]) -> dict[str, Benchmark]:
    """Benchmark records of benchmarks.yaml and benchmarks/*.yaml by id; each must name a known model,
    method and GPU (checked only where that file loaded)."""
    benchmarks: dict[str, Benchmark] = {}
    for doc, raw in docs:
        for bid, item in _index(doc, raw["benchmarks"], "id", Benchmark, "benchmarks").items():
            if bid in benchmarks:
                doc.problem(("benchmarks",), f"duplicate benchmark id {bid!r}")
            benchmarks[bid] = item
        for i, b in enumerate(raw["benchmarks"]):
            if not b:
                continue
            for fld, table in tables.items():
                if loaded[fld] and b[fld] is not None and b[fld] not in table:
                    doc.problem(("benchmarks", i, fld), _unknown(fld, b[fld], table))
    return benchmarks


def _check_slugs(articles: list[Article], problems: list[str]) -> None:
    """Two articles may not share a slug: the second would overwrite the first's page."""
    slugs: dict[str, str] = {}
    for art in articles:
        if art.slug in slugs:
            problems.append(f"{art.file}: slug: {art.slug!r} is already used by {slugs[art.slug]}")
        slugs[art.slug] = art.file


def _models(doc: Doc, items: list, broken: set[str]) -> dict[str, Model]:
    """Models by id; an architecture's computed count must equal the published total where both are given.
    The ids of models whose architecture block is there but has a problem are added to `broken`."""
    out: dict[str, Model] = {}
    for i, item in enumerate(items or []):
        if not item or item.get("id") is None:
            continue
        if item["id"] in out:
            doc.problem(("models", i, "id"), f"duplicate id {item['id']!r}")
            continue
        raw = item.get("architecture")
        arch = _architecture(doc, ("models", i, "architecture"), raw) if raw else None
        if raw and arch is None:
            broken.add(item["id"])
        published = item.get("parameters")
        if arch is None and published is None:
            doc.problem(("models", i, "parameters"), "missing; give the published total, an architecture, or both")
            continue
        total = published
        if arch is not None:
            total = arch.parameters()
            if published is not None and published != total:
                doc.problem(
                    ("models", i, "parameters"),
                    f"the architecture gives {total:,} parameters, the published total is {published:,}; "
                    "one of the two is wrong",
                )
        fields = {k: v for k, v in item.items() if k not in ("architecture", "parameters")}
        out[item["id"]] = Model(**fields, parameters=total, architecture=arch, published_parameters=published)
    return out


def _architecture(doc: Doc, path: tuple, raw: dict) -> Architecture | None:
    if any(raw.get(k) is None for k, f in ARCHITECTURE.record.items() if f.required):
        return None
    values = {k: v for k, v in raw.items() if v is not None}
    values["mlp_size"] = int(values.get("mlp_size", 0))
    arch = Architecture(**values)
    if arch.attention_heads % arch.kv_heads:  # each key/value head serves the same number of query heads
        doc.problem(
            path + ("kv_heads",),
            f"expected a number that divides attention_heads ({arch.attention_heads}), got {arch.kv_heads}",
        )
        return None
    if arch.moe and not (arch.experts_per_token and arch.expert_mlp_size and arch.moe_layers):
        doc.problem(path + ("experts",), "a mixture of experts needs experts_per_token, expert_mlp_size and moe_layers")
        return None
    for name, most, of in (("experts_per_token", arch.experts, "experts"), ("moe_layers", arch.layers, "layers")):
        if getattr(arch, name) > most:
            doc.problem(path + (name,), f"expected at most {of} ({most}), got {getattr(arch, name)}")
            return None
    if arch.dense_layers and not arch.mlp_size:
        doc.problem(path + ("mlp_size",), "missing; the dense layers need their MLP size")
        return None
    return arch


def _suites(docs: list, models: dict, methods: dict, gpus: dict, loaded: dict) -> dict[str, Suite]:
    out: dict[str, Suite] = {}
    for doc, raw in docs:
        if any(raw[k] is None for k in ("id", "model", "method", "samples", "sequence_length")):
            continue
        for fld, table in (("model", models), ("method", methods)):
            if loaded[fld] and raw[fld] not in table:
                doc.problem(("time_to_train", fld), _unknown(fld, raw[fld], table))
        if raw["id"] in out:
            doc.problem(("time_to_train", "id"), f"duplicate suite id {raw['id']!r} (also in {out[raw['id']].file})")
            continue
        results = []
        for i, r in enumerate(raw["results"]):
            if not r or any(r[k] is None for k in ("system", "submitter", "round", "gpu", "count", "minutes")):
                continue
            if loaded["gpu"] and r["gpu"] not in gpus:
                doc.problem(("time_to_train", "results", i, "gpu"), _unknown("GPU", r["gpu"], gpus))
                continue
            results.append(Result(**r, line=doc.line(("time_to_train", "results", i, "minutes"))))
        fields = {k: v for k, v in raw.items() if k != "results"}
        out[raw["id"]] = Suite(**fields, file=doc.file, results=tuple(results))
    return out


def _about(root: Path, problems: list[str]) -> str | None:
    path = root / "about.md"
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{display_path(path)}: cannot be read as UTF-8 text ({exc})")
        return None
    from generator.markdown_html import MAX_NESTING, too_deep

    number = too_deep(text)
    if number is not None:  # the converter would overflow its stack (markdown_html.MAX_NESTING)
        problems.append(
            f"{display_path(path)}:{number}: a line opens more than {MAX_NESTING} blockquotes or list items; "
            "expected flatter Markdown"
        )
        return None
    return text


def load_hardware(root: Path) -> dict[str, Gpu]:
    """Only hardware.yaml, for tools that need GPU ids without a whole build."""
    problems: list[str] = []
    doc = _load_doc(root / "hardware.yaml", problems)
    hw = _records(doc, HARDWARE)
    gpus = _index(doc, hw["gpus"], "id", Gpu, "gpus") if hw else {}
    if problems:
        raise ContentError(problems)
    return gpus


# Prices per GPU-hour outside these are typos whatever `confirmed` says (the dearest public
# on-demand price is tens of dollars; below a tenth of a cent figures lose their meaning).
HARD_FLOOR = 0.001
HARD_CEILING = 1000.0


def check_prices(snapshots: dict[str, tuple[Snapshot, ...]], guard: PriceGuard) -> list[str]:
    """Flag implausible prices: below a floor per GPU-hour, or a jump against the previous snapshot.

    An offer marked `confirmed: true` passes; that is how a real price cut or rise is accepted.
    """
    problems = []
    for provider, snaps in snapshots.items():
        previous: dict[tuple[str, int], Offer] = {}
        for snap in snaps:
            for offer in snap.offers:
                where = f"{offer.file}:{offer.line}" if offer.line else offer.file
                label = f"{provider} {offer.gpu}x{offer.count}"
                per_gpu = offer.usd_per_hour / offer.count
                old = previous.get((offer.gpu, offer.count))
                if not HARD_FLOOR <= per_gpu <= HARD_CEILING:  # no confirmation makes these real
                    problems.append(
                        f"{where}: usd_per_hour: {label} at ${offer.usd_per_hour:,.6g} is ${per_gpu:,.6g} per "
                        f"GPU-hour; expected ${HARD_FLOOR} to ${HARD_CEILING:,.0f} per GPU-hour"
                    )
                elif not offer.confirmed:
                    if per_gpu < guard.min_usd_per_gpu_hour:
                        problems.append(
                            f"{where}: usd_per_hour: {label} at ${offer.usd_per_hour:,.2f} is "
                            f"${per_gpu:,.4f} per GPU-hour, below the ${guard.min_usd_per_gpu_hour:,.2f} floor; "
                            "set 'confirmed: true' on the offer if the price is real"
                        )
                    elif old is not None:
                        change = offer.usd_per_hour / old.usd_per_hour - 1
                        if abs(change) > guard.max_change:
                            problems.append(
                                f"{where}: usd_per_hour: {label} moved from ${old.usd_per_hour:,.2f} "
                                f"({old.checked.isoformat()}) to ${offer.usd_per_hour:,.2f}, {change:+.0%}, "
                                f"more than the {guard.max_change:.0%} limit; "
                                "set 'confirmed: true' on the offer if the price is real"
                            )
                previous[(offer.gpu, offer.count)] = offer
    return problems


def _unknown(what: str, value: str, table: dict) -> str:
    known = ", ".join(sorted(table)) or "none defined"
    return f"unknown {what} {value!r}; known: {known}"


DATE_FILE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}\.yaml\Z")


def _load_snapshots(
    folder: Path, gpus: dict[str, Gpu] | None, problems: list[str], load_doc=_load_doc, parsed=None
) -> dict:
    """Every provider's snapshots, oldest first. With `parsed` (a parsecache.ParseCache that knows the code
    digest), a snapshot the last build loaded without a problem is taken as the records it made then, and
    when many are not, a second process parses half of them meanwhile (generator.parseahead)."""
    out: dict[str, list[Snapshot]] = {}
    if not folder.is_dir():
        problems.append(f"{display_path(folder)}: price folder not found")
        return {}
    known = "\0".join(sorted(gpus)) if gpus is not None else "\0unchecked"  # what an offer's GPU is checked against
    files = []  # (provider, path, shown as, its records' key) of every file named as a snapshot
    for provider_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        for path in sorted(provider_dir.iterdir()):
            display = display_path(path)
            if path.is_dir() or path.name.startswith("."):
                continue
            if not DATE_FILE_RE.match(path.name):
                problems.append(f"{display}: expected a file named YYYY-MM-DD.yaml")
                continue
            key = parsed.snapshot_key(path, display, provider_dir.name, known) if parsed is not None else None
            files.append((provider_dir.name, path, display, key))
    load_file = functools.partial(_snapshot_file, gpus=gpus, load_doc=load_doc)  # (provider, path, shown as, problems)
    ahead = parseahead.start(files, load_file, known, parsed)
    try:
        for provider, path, display, key in files:
            snap = parsed.snapshot(key) if key is not None else None
            if snap is None and key is not None and ahead is not None:
                snap = ahead.snapshot(key)
            if snap is not None:
                out.setdefault(provider, []).append(snap)
                continue
            before = len(problems)
            snap = load_file(provider, path, display, problems)
            if snap is None:
                continue
            out.setdefault(provider, []).append(snap)
            # a file with a problem is loaded, and told, every time; the key is read again, so records are kept
            # only under the bytes they were made from (not a file changed while it was being read)
            if (
                key is not None
                and len(problems) == before
                and key == parsed.snapshot_key(path, display, provider, known)
            ):
                parsed.keep_snapshot(key, snap)
    finally:
        if ahead is not None:
            ahead.close()
    return {p: tuple(sorted(s, key=lambda s: s.checked)) for p, s in sorted(out.items())}


def _snapshot_file(
    provider: str, path: Path, display: str, problems: list[str], gpus: dict[str, Gpu] | None, load_doc
) -> Snapshot | None:
    """One snapshot file's records (None when it has none to give), its problems added to `problems`."""
    doc = load_doc(path, problems)
    data = _records(doc, SNAPSHOT)
    if not data:
        return None
    if data["provider"] and data["provider"] != provider:
        doc.problem(("provider",), f"expected {provider!r} (the folder name), got {data['provider']!r}")
    if data["checked"] and path.stem != data["checked"].isoformat():
        doc.problem(("checked",), f"expected {path.stem} (the file name), got {data['checked'].isoformat()}")
    offers = []
    seen: set[tuple[str, int]] = set()
    for i, o in enumerate(data["offers"]):
        if not o or None in (o["gpu"], o["count"], o["usd_per_hour"]):
            continue
        if gpus is not None and o["gpu"] not in gpus:
            doc.problem(("offers", i, "gpu"), _unknown("GPU", o["gpu"], gpus))
            continue
        if (o["gpu"], o["count"]) in seen:
            doc.problem(("offers", i), f"duplicate offer {o['gpu']} x{o['count']}")
            continue
        seen.add((o["gpu"], o["count"]))
        offers.append(
            Offer(
                provider=provider,
                provider_name=data["name"] or provider,
                checked=data["checked"],
                source=data["source"],
                url=data["url"],
                gpu=o["gpu"],
                count=o["count"],
                usd_per_hour=float(o["usd_per_hour"]),
                spot_usd_per_hour=o["spot_usd_per_hour"],
                region=o["region"],
                instance_type=o["instance_type"],
                notes=o["notes"],
                confirmed=bool(o["confirmed"]),
                file=display,
                line=doc.line(("offers", i, "usd_per_hour")),
                gpu_memory_gb=o["gpu_memory_gb"],
                imported=data["checked_is"] == "imported",
            )
        )
    if data["checked"] is None:
        return None
    return Snapshot(
        provider=provider,
        name=data["name"] or provider,
        checked=data["checked"],
        source=data["source"],
        url=data["url"],
        file=display,
        offers=tuple(sorted(offers, key=lambda o: (o.gpu, o.count))),
        notes=data["notes"],
        acknowledged=data["acknowledged"],
        imported=data["checked_is"] == "imported",
    )


def read_front_matter(path: Path, problems: list[str]) -> tuple[Doc, str, int] | None:
    """A Markdown file with YAML front matter: the parsed front matter, the body and the body's first line."""
    display = display_path(path)
    text = read_text(path, display, problems)
    if text is None:
        return None
    text = text.replace("\r\n", "\n")
    m = FRONT_MATTER_RE.match(text)
    if not m:
        problems.append(f"{display}:1: expected YAML front matter between two '---' lines")
        return None
    doc = parse_yaml(m.group(1), display, line_offset=1)
    problems.extend(doc.problems)
    doc.problems = problems
    if doc.data is None:
        return None
    return doc, text[m.end() :], m.group(0).count("\n") + 1


def _load_articles(folder: Path, problems: list[str]) -> list[Article]:
    articles: list[Article] = []
    if not folder.is_dir():
        problems.append(f"{display_path(folder)}: articles folder not found")
        return articles
    for path in sorted(folder.glob("*.md")):
        parsed = read_front_matter(path, problems)
        if parsed is None:
            continue
        doc, body, body_line = parsed
        display = doc.file
        data = validate(doc, doc.data, ARTICLE)
        if not data or any(data[k] is None for k in ("title", "slug", "date", "description", "kind")):
            continue
        articles.append(
            Article(
                file=display,
                title=data["title"],
                slug=data["slug"],
                date=data["date"],
                description=data["description"],
                kind=data["kind"],
                tags=tuple(data["tags"] or ()),
                prices_as_of=data["prices_as_of"],
                params=doc.data.get("params") if isinstance(doc.data, dict) else None,
                params_doc=doc,
                sources=tuple(data["sources"] or ()),
                faq=tuple(data["faq"] or ()),
                attribution=data["attribution"],
                body=body,
                body_line=body_line,
                draft=bool(data["draft"]),
                aliases=tuple(data["aliases"] or ()),
            )
        )
    return articles
