"""The cost engine: pure functions over numbers, row dicts, numpy columns and pandas frames.

One module per subject, as the pipeline's stages are:

- `flops`: time, cost and utilization from operation counts, throughputs and prices;
- `rows`: the frame functions of `flops` for lists of row dicts (what a build uses: no pandas);
- `architecture`: parameter counts from a model's architecture (a Hugging Face config);
- `memory`: the memory of one training job, per GPU, part by part.

Nothing here renders or reads files. `from generator import engine` gives the
cost functions by their old names.
"""

from generator.engine.flops import *  # noqa: F403  (the cost functions, by their names)
from generator.engine.flops import MILLION, SECONDS_PER_HOUR, TERA  # noqa: F401
