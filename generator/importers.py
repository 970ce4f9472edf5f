"""Turn cloud price catalogs into costpress price snapshots.

Supported: SkyPilot catalog `vms.csv` files (schema v6 and v7). Columns are
read by header name because their order differs per cloud. Known quirks:
GCP lists host VMs and GPUs in separate rows (summed per zone), prices may be
empty, rows repeat per availability zone, and one Azure size carries a wrong
GPU count.
"""

from __future__ import annotations

import ast
import csv
import datetime as dt
import fnmatch
import io
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from generator import formatting as fmt
from generator.errors import CostpressError
from generator.records import Gpu

REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "Price", "SpotPrice")

# GCP host VM families and the accelerator each one carries (the count is in the name: -8g).
GCP_HOSTS = {
    "a2-highgpu": "A100",
    "a2-megagpu": "A100",
    "a2-ultragpu": "A100-80GB",
    "a3-highgpu": "H100",
    "a3-edgegpu": "H100",
    "a3-megagpu": "H100-MEGA",
    "a3-ultragpu": "H200",
}
GCP_HOST_RE = re.compile(r"^(a\d-[a-z]+gpu)-(\d+)g(?:-[a-z]+)?\Z")

# Sizes whose catalog GPU count is wrong (the real VM has 8 H100s).
COUNT_FIXES = {"Standard_ND96isr_H100_v5": 8}


@dataclass
class Row:
    instance: str
    accelerator: str
    count: int
    region: str
    zone: str
    price: float | None
    spot: float | None
    memory_gb: float | None = None  # per GPU, as the catalog's GpuInfo states it


@dataclass
class Summary:
    rows: int = 0
    offers: int = 0
    skipped: Counter = field(default_factory=Counter)
    unknown: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    noun: str = "offers"
    mapped_by: str = "catalog_names or catalog_instances"  # the GPU keys in hardware.yaml that would map them

    def lines(self) -> list[str]:
        out = [f"read {fmt.count(self.rows, 'row')}, kept {self.offers} {self.noun}"]
        for reason, n in sorted(self.skipped.items()):
            out.append(f"skipped {fmt.count(n, 'row')}: {reason}")
        if self.unknown:
            names = ", ".join(f"{name} ({n})" for name, n in sorted(self.unknown.items()))
            skipped = fmt.count(sum(self.unknown.values()), "row")
            out.append(
                f"skipped {skipped} with accelerators hardware.yaml does not map (a GPU's {self.mapped_by} "
                f"would): {names}"
            )
        out.extend(self.notes)
        return out


def _number(text: str) -> float | None:
    text = (text or "").strip()
    if not text:
        return None
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _gpu_memory(info: str | None) -> float | None:
    """Per-GPU memory in GB from a GpuInfo cell, when it is a dict with MemoryInfo."""
    if not info or not info.strip().startswith("{"):
        return None
    try:
        data = ast.literal_eval(info)
        mib = data["Gpus"][0]["MemoryInfo"]["SizeInMiB"]
    except (ValueError, SyntaxError, KeyError, IndexError, TypeError):
        return None
    return round(float(mib) / 1024, 1) if mib else None


MAX_GPUS = 100_000  # GPUs in one offer; a row with more is skipped (a count of 1e300 was written as it came)


def _read_csv(path: Path, required: tuple[str, ...], what: str) -> list[dict]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CostpressError(f"{path}: cannot read ({exc.strerror})") from None
    if b"\0" in raw:
        raise CostpressError(f"{path}: expected a CSV text file, found binary data")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CostpressError(f"{path}: expected UTF-8 text") from None
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            raise CostpressError(
                f"{path}: not {what}: missing column {', '.join(repr(m) for m in missing)} "
                f"(found: {', '.join(header) or 'none'})"
            )
        return list(reader)
    except csv.Error as exc:  # a field past the csv module's 131,072 characters, a stray quote in strict mode
        raise CostpressError(f"{path}:{reader.line_num + 1}: not {what} ({exc})") from None


def read_skypilot(path: Path, summary: Summary) -> list[Row]:
    """Parse a SkyPilot vms.csv by column name."""
    records = _read_csv(path, REQUIRED, "a SkyPilot vms.csv")
    rows = []
    for n, rec in enumerate(records, start=2):
        summary.rows += 1
        try:
            count_text = (rec["AcceleratorCount"] or "").strip()
            count = float(count_text) if count_text else 0.0
            price, spot = _number(rec["Price"]), _number(rec["SpotPrice"])
        except (ValueError, TypeError):
            summary.skipped[f"unreadable number (first at line {n})"] += 1
            continue
        if count and not count.is_integer():
            summary.skipped["fractional GPU count"] += 1
            continue
        if count > MAX_GPUS:  # no machine has them: a typo in the catalog
            summary.skipped[f"GPU count over {MAX_GPUS:,}"] += 1
            continue
        rows.append(
            Row(
                memory_gb=_gpu_memory(rec.get("GpuInfo")),
                instance=(rec["InstanceType"] or "").strip(),
                accelerator=(rec["AcceleratorName"] or "").strip(),
                count=int(count),
                region=(rec["Region"] or "").strip(),
                zone=(rec.get("AvailabilityZone") or "").strip(),
                price=price,
                spot=spot,
            )
        )
    if summary.rows == 0:
        raise CostpressError(f"{path}: the catalog has a header but no rows")
    return rows


def _merge_gcp(rows: list[Row], summary: Summary) -> list[Row]:
    """GCP: a GPU VM costs host row + GPU row of the same zone; return whole-VM rows."""
    hosts = [r for r in rows if not r.accelerator and r.instance]
    gpus = [r for r in rows if r.accelerator and not r.instance]
    if not hosts:
        return rows
    by_key = {(g.accelerator, g.count, g.zone): g for g in gpus}
    used = set()
    merged = [r for r in rows if r.accelerator and r.instance]
    for host in hosts:
        m = GCP_HOST_RE.match(host.instance)
        family = GCP_HOSTS.get(m.group(1)) if m else None
        if family is None:
            summary.skipped["GCP host VM of an unknown family"] += 1
            continue
        count = int(m.group(2))
        gpu = by_key.get((family, count, host.zone))
        if gpu is None:
            summary.skipped["GCP host VM with no GPU price in its zone"] += 1
            continue
        used.add((family, count, host.zone))
        price = None if host.price is None or gpu.price is None else round(host.price + gpu.price, 6)
        spot = None if host.spot is None or gpu.spot is None else round(host.spot + gpu.spot, 6)
        merged.append(Row(host.instance, family, count, host.region, host.zone, price, spot))
    for key in by_key:
        if key not in used:
            summary.skipped["GCP GPU price with no host VM row (GPU part only, not a full price)"] += 1
    return merged


def _gpu_for(row: Row, gpus: dict[str, Gpu]) -> str | None:
    for gpu in gpus.values():
        if any(fnmatch.fnmatchcase(row.instance, pat) for pat in gpu.catalog_instances or ()):
            return gpu.id
    for gpu in gpus.values():
        if row.accelerator in (gpu.catalog_names or ()):
            return gpu.id
    return None


def import_skypilot(
    path: Path,
    provider: str,
    checked: dt.date,
    gpus: dict[str, Gpu],
    name: str | None = None,
    commit: str | None = None,
) -> tuple[str, Summary]:
    """Return the snapshot YAML text for one catalog, and what was kept and skipped."""
    summary = Summary()
    rows = _merge_gcp(read_skypilot(path, summary), summary)
    groups: dict[tuple[str, int], list[Row]] = defaultdict(list)
    for row in rows:
        if row.instance in COUNT_FIXES and row.count != COUNT_FIXES[row.instance]:
            summary.notes.append(f"{row.instance}: catalog says {row.count} GPUs, using {COUNT_FIXES[row.instance]}")
            row.count = COUNT_FIXES[row.instance]
        if not row.accelerator or row.count < 1:
            summary.skipped["no accelerator"] += 1
            continue
        gpu = _gpu_for(row, gpus)
        if gpu is None:
            summary.unknown[row.accelerator] += 1
            continue
        if row.price is None or row.price <= 0:
            summary.skipped["no on-demand price"] += 1
            continue
        groups[(gpu, row.count)].append(row)
    summary.notes = sorted(set(summary.notes))
    offers = []
    for (gpu, count), group in sorted(groups.items()):
        # A row whose spot price is above its on-demand price has columns we cannot trust
        # (RunPod's L40S rows look swapped); price the offer from the other rows.
        trusted = [r for r in group if r.spot is None or r.spot <= r.price]
        if len(trusted) < len(group):
            summary.skipped[f"spot above on-demand, row not trusted ({gpu} x{count})"] += len(group) - len(trusted)
        if not trusted:
            continue
        best = min(trusted, key=lambda r: (r.price, r.region, r.zone, r.instance))
        offer = {"gpu": gpu, "count": count, "usd_per_hour": best.price}
        spots = [r.spot for r in trusted if r.spot is not None and r.spot > 0]
        if spots:
            offer["spot_usd_per_hour"] = min(spots)
        offer["region"] = best.region
        offer["instance_type"] = best.instance
        if best.memory_gb:
            offer["gpu_memory_gb"] = best.memory_gb
        offers.append(offer)
    if not offers:
        raise CostpressError(
            f"{path}: no row maps to a GPU in hardware.yaml with an on-demand price; " + "; ".join(summary.lines()[1:])
        )
    summary.offers = len(offers)
    too_big = [o for o in offers if o.get("gpu_memory_gb", 0) > gpus[o["gpu"]].memory_gb * 1.05]
    acknowledged = None
    if too_big:
        acknowledged = (
            f"The catalog's GpuInfo gives more memory per GPU than the GPU has for {len(too_big)} offers "
            "(it looks like host memory); costpress uses the memory in hardware.yaml."
        )
        summary.notes.append(
            f"{len(too_big)} offers claim more GPU memory than hardware.yaml gives; see `costpress lint`"
        )
    doc = {
        "provider": provider,
        "name": name or provider,
        "checked": checked,
        "checked_is": "imported",
        "source": f"{catalog_name(path, provider, commit)}: lowest on-demand price across regions and zones",
        "url": SKYPILOT_URL + (f"/tree/{commit or named_commit(path)}" if (commit or named_commit(path)) else ""),
        "currency": "USD",
        **({"acknowledged": acknowledged} if acknowledged else {}),
        "offers": offers,
    }
    header = f"# Imported by costpress import-prices from {path.name}. Edit the catalog, not this file.\n"
    return header + yaml.safe_dump(
        doc, sort_keys=False, default_flow_style=None, width=1000, allow_unicode=True
    ), summary


SKYPILOT_URL = "https://github.com/skypilot-org/skypilot-catalog"
# an extract named <source>-<cloud>-<schema version>-<short commit>.csv, as in shared/data/price-catalogs
EXTRACT_NAME = re.compile(r"^skypilot-catalog-(?P<cloud>[a-z0-9]+)-(?P<schema>v\d+)-(?P<commit>[0-9a-f]{7,40})\.csv\Z")


def named_commit(path: Path) -> str | None:
    m = EXTRACT_NAME.match(path.name)
    return m.group("commit") if m else None


def catalog_name(path: Path, provider: str, commit: str | None) -> str:
    """The source as a reader can find it: the catalog repository, the cloud's file and its commit."""
    m = EXTRACT_NAME.match(path.name)
    commit = commit or (m.group("commit") if m else None)
    schema = f"{m.group('schema')} " if m else ""
    where = f"at commit {commit}" if commit else "at a commit not recorded"
    return f"SkyPilot catalog (skypilot-org/skypilot-catalog), {schema}{provider} vms.csv {where}"


# --- time-to-train results --------------------------------------------------------

MLPERF_REQUIRED = (
    "mlperf_version",
    "submitter",
    "submitter_dir",
    "system_name",
    "division",
    "availability",
    "accelerator_count",
    "accelerator_model_name",
    "run_minutes",
    "time_to_train_minutes",
    "results_path",
    "source_repo",
    "commit",
)


def import_mlperf(path: Path, header: dict, gpus: dict[str, Gpu], count: int) -> tuple[str, Summary]:
    """Rewrite a time-to-train suite's results from an MLPerf Training summary CSV.

    `header` is the suite's own fields (model, method, samples ...), kept as they
    are; only `results` comes from the CSV: closed-division systems with `count`
    accelerators and a score. Rows with identical run logs (power-measurement
    resubmissions of the same runs) are one result.
    """
    summary = Summary(noun="results", mapped_by="result_names")
    names = {name: gpu.id for gpu in gpus.values() for name in gpu.result_names or ()}
    seen: dict[tuple[str, str], str] = {}
    results = []
    for n, row in enumerate(_read_csv(path, MLPERF_REQUIRED, "an MLPerf results summary"), start=2):
        summary.rows += 1
        if row["division"].strip() != "closed":
            summary.skipped["not in the closed division"] += 1
            continue
        try:
            gpus_in_system = int(row["accelerator_count"])
            minutes = float(row["time_to_train_minutes"]) if row["time_to_train_minutes"].strip() else None
        except ValueError:
            raise CostpressError(
                f"{path}:{n}: expected numbers in accelerator_count and time_to_train_minutes"
            ) from None
        if gpus_in_system != count:
            summary.skipped[f"not {count} accelerators"] += 1
            continue
        if minutes is None:
            summary.skipped["no time-to-train score"] += 1
            continue
        if not math.isfinite(minutes) or minutes <= 0:
            raise CostpressError(f"{path}:{n}: time_to_train_minutes: expected a positive number, got {minutes}")
        accelerator = row["accelerator_model_name"].strip()
        gpu = names.get(accelerator)
        if gpu is None:
            summary.unknown[accelerator] += 1
            continue
        same = (row["mlperf_version"], row["run_minutes"])
        if same in seen:
            summary.skipped["same run logs as another submission"] += 1
            summary.notes.append(f"{row['submitter_dir']} {row['system_name']}: same runs as {seen[same]}, kept once")
            continue
        seen[same] = f"{row['submitter_dir']} {row['system_name']}"
        result = {
            "system": row["system_name"].strip(),
            "submitter": row["submitter"].strip(),
            "round": row["mlperf_version"].strip(),
            "gpu": gpu,
            "count": count,
            "minutes": minutes,
            "availability": row["availability"].strip(),
            "url": f"https://github.com/{row['source_repo'].strip()}/tree/{row['commit'].strip()}/"
            f"{row['results_path'].strip().rstrip('/')}",
        }
        results.append(result)
    if not results:
        skipped = "; ".join(summary.lines()[1:]) or "the file has a header but no rows"
        raise CostpressError(
            f"{path}: no closed-division result with {count} accelerators maps to a GPU in hardware.yaml "
            f"(result_names); {skipped}"
        )
    results.sort(key=lambda r: (r["gpu"], r["minutes"], r["round"], r["submitter"], r["system"]))
    summary.offers = len(results)
    summary.notes = sorted(set(summary.notes))
    doc = {
        "time_to_train": {**{k: v for k, v in header.items() if k != "results" and v is not None}, "results": results}
    }
    comment = (
        f"# Results imported by costpress import-results from {path.name}; the fields above `results`\n"
        "# are kept on re-import. Edit the CSV or the header, not the results.\n"
    )
    return comment + yaml.safe_dump(
        doc, sort_keys=False, default_flow_style=None, width=1000, allow_unicode=True
    ), summary
