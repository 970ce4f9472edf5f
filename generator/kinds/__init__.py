"""Article kinds, one module each: a parameter schema (`SPEC`) and a `build` that makes a page context.

`KINDS` maps the `kind:` an article names to its schema and builder;
generator/articles.py checks the params and runs the builder.
"""

from __future__ import annotations

from generator.kinds import flops, market, memory_check, setup, throughput, time_to_train

KINDS = {
    "throughput": (throughput.SPEC, throughput.build),
    "flops": (flops.SPEC, flops.build),
    "market": (market.SPEC, market.build),
    "setup": (setup.SPEC, setup.build),
    "time-to-train": (time_to_train.SPEC, time_to_train.build),
    "memory-check": (memory_check.SPEC, memory_check.build),
}
