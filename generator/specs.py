"""The YAML schemas of content/: what each file and field may hold (checked by generator/schema.py)."""

from __future__ import annotations

from generator.engine.architecture import FAMILIES
from generator.engine.memory import LORA_TARGETS
from generator.schema import MAX_ALIASES, MAX_TAGS, F, list_of, opt, record

SOURCE_FIELDS = {"source": F("text"), "url": opt("url")}

PRICE_GUARD = record(
    {"max_change": F("positive"), "min_usd_per_gpu_hour": F("positive")},
    required=False,
)

SITE = record(
    {
        "title": F("text"),
        "description": F("text"),
        "base_url": F("url"),
        "author": F("text"),
        "publisher": F("text"),
        "language": F("text"),
        # Number formatting is fixed by this setting, never by the machine's locale.
        "locale": F("choice", choices=("en-US",)),
        "price_guard": PRICE_GUARD,
        "stale_after_days": opt("count"),
        # the share of dense peak FLOP-based estimates plan with, and checks of published throughputs use
        "planning_utilization": opt("share"),
        # a Pagefind index and a search page (generator/search.py)
        "search": opt("bool"),
    }
)


HARDWARE = record(
    {
        "gpus": list_of(
            record(
                {
                    "id": F("id"),
                    "name": F("text"),
                    "short_name": F("text"),
                    "peak_tflops": F("positive"),
                    "peak_source": F("text"),
                    "peak_url": opt("url"),
                    "memory_gb": F("positive"),
                    "memory_source": F("text"),
                    "memory_url": opt("url"),
                    "notes": opt("para"),
                    "catalog_names": list_of(F("text"), required=False),
                    "catalog_instances": list_of(F("text"), required=False),
                    "result_names": list_of(F("text"), required=False),
                }
            )
        )
    }
)

# What engine.architecture needs to count a model's parameters (costpress import-model writes it).
ARCHITECTURE = record(
    {
        "family": F("choice", choices=tuple(FAMILIES)),
        "vocab_size": F("count", most=1e7),
        "hidden_size": F("count", most=1e6),
        "layers": F("count", most=10_000),
        "attention_heads": F("count", most=10_000),
        "kv_heads": F("count", most=10_000),
        "head_dim": F("count", most=100_000),
        "mlp_size": opt("nonnegative"),
        "tied_embeddings": F("bool"),
        "qkv_bias": opt("bool"),
        "qk_norm": opt("bool"),
        "norms_per_layer": opt("count"),
        "experts": opt("count"),
        "experts_per_token": opt("count"),
        "expert_mlp_size": opt("count"),
        "shared_expert_mlp_size": opt("count"),
        "moe_layers": opt("count"),
    },
    required=False,
)

MODELS = record(
    {
        "models": list_of(
            record(
                {
                    "id": F("id"),
                    "name": F("text"),
                    # the published total; with an architecture it is checked against the computed count
                    "parameters": opt("count", most=1e14),
                    "weights_gb": opt("positive"),
                    "architecture": ARCHITECTURE,
                    **SOURCE_FIELDS,
                }
            )
        )
    }
)

# How a method stores and trains the model: what engine.memory needs.
TRAINING = record(
    {
        "weights": F("choice", choices=("bf16", "int8", "nf4")),
        "trainable": F("choice", choices=("all", "lora")),
        "optimizer": F("choice", choices=("adamw", "adamw-8bit")),
        "master_weights": F("bool"),
        "checkpointing": F("bool"),
        "lora_rank": opt("count"),
        "lora_targets": list_of(F("choice", choices=LORA_TARGETS), required=False, nonempty=True),
    },
    required=False,
)

METHODS = record(
    {
        "methods": list_of(
            record(
                {
                    "id": F("id"),
                    "name": F("text"),
                    "family": F("choice", choices=("adapter", "full")),
                    "forward": F("positive"),
                    "recompute": F("nonnegative"),
                    "backward": F("positive"),
                    "training": TRAINING,
                    **SOURCE_FIELDS,
                }
            )
        ),
        "evaluation": record({"forward": F("positive"), **SOURCE_FIELDS}),
        "memory": list_of(
            record(
                {
                    "model": F("id"),
                    "method": F("id"),
                    "gb": F("positive"),
                    "sequence_length": F("count"),
                    **SOURCE_FIELDS,
                }
            ),
            required=False,
        ),
    }
)

BENCHMARKS = record(
    {
        "benchmarks": list_of(
            record(
                {
                    "id": F("id"),
                    "model": F("id"),
                    "method": F("id"),
                    "label": opt("text"),
                    "gpu": F("id"),
                    "count": F("count"),
                    "tokens_per_second": F("positive"),
                    "sequence_length": opt("count"),
                    "batch_size": opt("count"),
                    "steps": opt("count"),
                    "framework": opt("text"),
                    "definition": F("para"),
                    "notes": opt("para"),
                    "acknowledged": opt("para"),
                    **SOURCE_FIELDS,
                }
            )
        )
    }
)

# Published time-to-train results of one benchmark suite, e.g. MLPerf Training.
# The suite fixes the work (model, method, samples × sequence length); each
# result is one system's measured wall time for that work.
TIME_TO_TRAIN = record(
    {
        "id": F("id"),
        "name": F("text"),
        "model": F("id"),
        "method": F("id"),
        "sequence_length": F("count"),
        "sequence_source": F("text"),
        "sequence_url": opt("url"),
        "samples": F("positive"),
        "samples_source": F("text"),
        "samples_url": opt("url"),
        "definition": F("para"),
        "notes": opt("para"),
        **SOURCE_FIELDS,
        "results": list_of(
            record(
                {
                    "system": F("text"),
                    "submitter": F("text"),
                    "round": F("text"),
                    "gpu": F("id"),
                    "count": F("count"),
                    "minutes": F("positive"),
                    "availability": opt("text"),
                    "url": opt("url"),
                    "acknowledged": opt("para"),
                }
            )
        ),
    },
    required=False,
)

# A file under benchmarks/ holds throughput records, a time-to-train suite, or both.
BENCHMARK_FILE = record(
    {"benchmarks": list_of(BENCHMARKS.record["benchmarks"].item, required=False), "time_to_train": TIME_TO_TRAIN}
)

SNAPSHOT = record(
    {
        "provider": F("slug"),
        "name": opt("text"),
        "checked": F("date"),
        # imported: `checked` is the day a catalog was imported, not a day anyone read the prices
        "checked_is": opt("choice", choices=("read", "imported")),
        "source": F("text"),
        "url": opt("url"),
        "notes": opt("para"),
        "acknowledged": opt("para"),
        "currency": F("choice", choices=("USD",)),
        "offers": list_of(
            record(
                {
                    "gpu": F("id"),
                    "count": F("count"),
                    "usd_per_hour": F("positive"),
                    "spot_usd_per_hour": opt("positive"),
                    "region": opt("text"),
                    "instance_type": opt("text"),
                    "gpu_memory_gb": opt("positive"),
                    "notes": opt("para"),
                    "confirmed": opt("bool"),
                }
            )
        ),
    }
)

ARTICLE = record(
    {
        "title": F("text"),
        "slug": F("slug"),
        "date": F("date"),
        "description": F("text"),
        "kind": F("text"),
        "tags": list_of(F("text"), required=False, most=MAX_TAGS),
        "prices_as_of": opt("date"),
        "params": F("any"),
        "sources": list_of(record({"name": F("text"), "url": opt("url")}), required=False),
        "faq": list_of(record({"q": F("text"), "a": F("para")}), required=False),
        "attribution": opt("text"),
        "draft": opt("bool"),  # kept out of the site unless built with --drafts
        # addresses the page had before: each gets a page that sends the reader on (generator/aliases.py)
        "aliases": list_of(F("path"), required=False, most=MAX_ALIASES),
    }
)
