"""Plausibility checks of the data against itself: `costpress lint`, and warnings in every build."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from generator import engine
from generator import formatting as fmt
from generator.load import display_path
from generator.records import Catalog

LOW_UTILIZATION, HIGH_UTILIZATION = 0.05, 1.0
OUTLIER_FACTOR = 3.0


@dataclass(frozen=True)
class Finding:
    where: str
    message: str
    flagged: bool  # outside the plausible range
    acknowledged: str | None = None
    note: bool = False  # not wrong, but worth listing every time (a source without an address)

    @property
    def shown(self) -> bool:
        """Printed without --verbose: flags (acknowledged or not) and notes, not checks that passed."""
        return self.flagged or self.note

    def line(self) -> str:
        mark = "flag" if self.flagged and not self.acknowledged else ("acknowledged" if self.flagged else "ok")
        mark = "note" if self.note and not self.flagged else mark
        text = f"{self.where}: {mark}: {self.message}"
        return text + (f" (acknowledged: {self.acknowledged})" if self.flagged and self.acknowledged else "")


def benchmark_findings(cat: Catalog) -> list[Finding]:
    """Each throughput record's implied compute rate and share of the hardware's dense peak."""
    out = []
    for b in sorted(cat.benchmarks.values(), key=lambda b: b.id):
        method, model, gpu = cat.methods[b.method], cat.models[b.model], cat.gpus[b.gpu]
        peak = gpu.peak_tflops * b.count
        util = engine.implied_utilization(method.ops_per_param, model.parameters, b.tokens_per_second, peak)
        rate = method.ops_per_param * model.parameters * b.tokens_per_second / 1e12
        flagged = util > HIGH_UTILIZATION or util < LOW_UTILIZATION
        message = (
            f"{fmt.number(b.tokens_per_second, 2)} tokens/s × {fmt.number(method.ops_per_param)} "
            f"operations × {fmt.billions(model.parameters)} parameters = {fmt.number(rate, 1)} TFLOPS, "
            f"{fmt.pct(util)} of the {fmt.number(peak)} TFLOPS dense peak of {b.count} × {gpu.name}"
        )
        where = f"{display_path(cat.root / 'benchmarks.yaml')}: {b.id}"
        out.append(Finding(where, message, flagged, b.acknowledged))
    return out


def result_findings(cat: Catalog) -> list[Finding]:
    """Each time-to-train result's implied share of its setup's dense peak."""
    out = []
    for suite in sorted(cat.suites.values(), key=lambda s: s.id):
        model, method = cat.models[suite.model], cat.methods[suite.method]
        for r in suite.results:
            gpu = cat.gpus[r.gpu]
            peak = gpu.peak_tflops * r.count
            util = engine.utilization_over_run(
                method.ops_per_param, model.parameters, suite.tokens, peak, r.minutes / 60
            )
            flagged = util > HIGH_UTILIZATION or util < LOW_UTILIZATION
            message = (
                f"{r.round} {r.submitter} {r.system}: {fmt.tokens(suite.tokens)} tokens × "
                f"{fmt.number(method.ops_per_param)} operations × {fmt.billions(model.parameters)} parameters in "
                f"{fmt.number(r.minutes, 2)} minutes = {fmt.pct(util)} of the {fmt.number(peak)} TFLOPS dense peak "
                f"of {r.count} × {gpu.name}"
            )
            where = f"{suite.file}:{r.line}" if r.line else suite.file
            out.append(Finding(where, message, flagged, r.acknowledged))
    return out


def price_findings(cat: Catalog) -> list[Finding]:
    """Offers whose price per PFLOP-hour is far from the median of their own snapshot."""
    out = []
    for snaps in cat.snapshots.values():
        snap = snaps[-1]
        values = {o.key: o.usd_per_hour / (cat.gpus[o.gpu].peak_tflops * o.count / 1000) for o in snap.offers}
        if len(values) < 3:
            continue
        median = statistics.median(values.values())
        for offer in snap.offers:
            value = values[offer.key]
            if value > median * OUTLIER_FACTOR or value < median / OUTLIER_FACTOR:
                message = f"{offer.key}: {fmt.usd(value)} per PFLOP-hour against a snapshot median of {fmt.usd(median)}"
                out.append(Finding(snap.file, message, True, offer.notes if offer.confirmed else None))
    return out


def memory_findings(cat: Catalog) -> list[Finding]:
    """Offers whose catalog claims more memory per GPU than the GPU has."""
    out = []
    for snaps in cat.snapshots.values():
        for offer in snaps[-1].offers:
            gpu = cat.gpus[offer.gpu]
            if offer.gpu_memory_gb and offer.gpu_memory_gb > gpu.memory_gb * 1.05:
                message = (
                    f"{offer.key}: the catalog says {fmt.number(offer.gpu_memory_gb)} GB per GPU, but "
                    f"{fmt.a_an(gpu.name)} {gpu.name} has {fmt.number(gpu.memory_gb)} GB; "
                    f"costpress uses {fmt.number(gpu.memory_gb)}"
                )
                out.append(Finding(offer.file, message, True, snaps[-1].acknowledged))
    return out


def age_findings(cat: Catalog) -> list[Finding]:
    """Each provider's newest snapshot against the newest snapshot in content/."""
    newest = max((s.checked for snaps in cat.snapshots.values() for s in snaps), default=None)
    out = []
    for snaps in cat.snapshots.values():
        snap = snaps[-1]
        age = (newest - snap.checked).days
        flagged = age > cat.site.stale_after_days
        out.append(
            Finding(
                snap.file,
                f"{fmt.count(age, 'day')} older than the newest snapshot "
                f"(limit {fmt.count(cat.site.stale_after_days, 'day')})",
                flagged,
            )
        )
    return out


def source_findings(cat: Catalog) -> list[Finding]:
    """Sources a page cites that have no public address a reader could follow (listed, not flagged)."""
    root = cat.root
    found: list[tuple[str, str]] = []
    for m in cat.models.values():
        if not m.url:
            found.append((display_path(root / "models.yaml"), f"model {m.id}: {m.source}"))
    for m in cat.methods.values():
        if not m.url:
            found.append((display_path(root / "methods.yaml"), f"method {m.id}: {m.source}"))
    for (model, method), mem in sorted(cat.memory.items()):
        if not mem.url:
            found.append((display_path(root / "methods.yaml"), f"memory {model}/{method}: {mem.source}"))
    for g in cat.gpus.values():
        for what, source, url in (("peak", g.peak_source, g.peak_url), ("memory", g.memory_source, g.memory_url)):
            if not url:
                found.append((display_path(root / "hardware.yaml"), f"GPU {g.id} {what}: {source}"))
    for b in cat.benchmarks.values():
        if not b.url:
            found.append((display_path(root / "benchmarks.yaml"), f"benchmark {b.id}: {b.source}"))
    for snaps in cat.snapshots.values():
        if not snaps[-1].url:
            found.append((snaps[-1].file, f"price snapshot: {snaps[-1].source}"))
    return [Finding(where, f"no public address for {what}", False, note=True) for where, what in found]


def lint(cat: Catalog) -> list[Finding]:
    """All findings, benchmarks first."""
    return (
        benchmark_findings(cat)
        + result_findings(cat)
        + price_findings(cat)
        + memory_findings(cat)
        + age_findings(cat)
        + source_findings(cat)
    )


def warnings(cat: Catalog) -> list[str]:
    """Flagged findings nobody acknowledged, as build warnings."""
    return [f.line() for f in lint(cat) if f.flagged and not f.acknowledged]
