"""Kind `memory-check`: the memory model's prediction beside every published measurement, with the error of each.

Steps: predict each measurement (content/measurements/) with the conditions
it states; set the vendor guide's totals (methods.yaml `memory:`) beside the
model on one device; rank the misses; say how many fall within the target.
"""

from __future__ import annotations

from generator import formatting as fmt
from generator import measurements as ms
from generator.answer import answer
from generator.claims import own
from generator.engine import memory
from generator.kinds.common import Context, Recorder
from generator.model import Blocks, Column, Input, Table
from generator.scenarios import training_job
from generator.schema import F, record

SPEC = record({"target_error": F("share")})

COLUMNS = [
    Column("label", "Measured job"),
    Column("model", "Model"),
    Column("setup", "GPUs"),
    Column("measured", "Measured (GB per GPU)", "num1", True),
    Column("predicted", "Model (GB per GPU)", "num1", True),
    Column("error", "Model vs published", "signed_pct", True),
]


def build(cat, art, p: dict) -> Context:
    rec = Recorder()
    rows = measured_rows(cat, rec) + guide_rows(cat, rec)
    worst = max(rows, key=lambda r: abs(r["error"]))
    within = [r for r in rows if abs(r["error"]) <= p["target_error"]]
    blocks = Blocks()
    caption = "Peak memory per GPU: published figures (GiB converted to GB) and the memory model"
    blocks.add(Table("measurements", caption, COLUMNS, rows))
    values = {
        "rows": rows,
        "worst": worst,
        "within": len(within),
        "count": len(rows),
        "target_error": p["target_error"],
        "largest_error": rec("largest_error", abs(worst["error"]), "share", worst["id"]),
        "reserve": memory.RESERVE,
        "overhead_gb": memory.OVERHEAD_GB,
        "sources": sorted({(m.source, m.url, m.conditions) for m in cat.measurements}),
        "answer": answer(
            len(within),
            "int",
            f"of {len(rows)} published peak-memory figures within {fmt.pct(p['target_error'])} of the model",
            f"largest difference {fmt.pct(abs(worst['error']))}: {worst['label']}, {worst['setup']}",
        ),
    }
    inputs = [
        Input(f"Peak memory, {r['label']}, {r['setup']}", r["published"], "num1", r["unit"], r["source"], r["url"])
        for r in rows
    ]
    return Context(values, blocks, inputs, list(rec.figures.values()), rests_on=RESTS_ON)


# The figures each of the page's statements rests on (generator.claims): how many figures fall within the
# target and which is the largest miss come from the errors; each row from its own figures.
_ERRORS = (own("*.error"),)
RESTS_ON = {
    **dict.fromkeys(("within", "worst", "answer"), _ERRORS),
    "rows": (own("*.measured"), own("*.published"), own("*.predicted"), *_ERRORS),
}


def measured_rows(cat, rec: Recorder) -> list[dict]:
    out = []
    for m in cat.measurements:
        b = ms.predict(m, cat.models)
        predicted = ms.predicted_gb(m, b)
        out.append(
            {
                "id": m.id,
                "label": m.label,
                "model": cat.models[m.model].name,
                "setup": fmt.setup(m.count, m.gpu_name),
                "measured": rec(f"{m.id}.measured", m.peak_gb, "GB"),
                "predicted": rec(f"{m.id}.predicted", predicted, "GB", m.id),
                "error": rec(f"{m.id}.error", predicted / m.peak_gb - 1, "share", m.id),
                "published": m.peak_as_published,
                "unit": m.unit,
                "what": "measured peak reserved by PyTorch" if m.counter == "pytorch-reserved" else "measured total",
                "explanation": m.explanation,
                "notes": list(b.notes),
                "source": m.source,
                "url": m.url,
            }
        )
    return out


def guide_rows(cat, rec: Recorder) -> list[dict]:
    """The guide's totals: one sequence of their stated length, everything on one device, context included."""
    out = []
    for (model_id, method_id), mem in sorted(cat.memory.items()):
        model, method = cat.models[model_id], cat.methods[method_id]
        job = training_job(model, method, 1, sequence_length=mem.sequence_length)
        if job is None:
            continue
        predicted = memory.breakdown(job).per_gpu_gb
        key = f"guide.{model_id}.{method_id}"
        out.append(
            {
                "id": key,
                "label": f"{method.name} (a vendor's estimate, not a measurement)",
                "model": model.name,
                "setup": "1 device, all state",
                "measured": rec(f"{key}.published", mem.gb, "GB"),
                "predicted": rec(f"{key}.predicted", predicted, "GB", key),
                "error": rec(f"{key}.error", predicted / mem.gb - 1, "share", key),
                "published": mem.gb,
                "unit": "GB",
                "what": "vendor estimate of the whole training state",
                "explanation": "",
                "notes": [],
                "source": mem.source,
                "url": mem.url,
            }
        )
    return out
