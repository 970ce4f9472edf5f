"""`costpress import-model`: a Hugging Face config.json into an entry of content/models.yaml.

The entry holds the architecture block (what engine.architecture counts
from) and, when given, the published parameter total, which the build checks
against the computed count. An existing entry with the same id is replaced
in place; the rest of the file (comments included) is kept as it is.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from generator.engine.architecture import Architecture, UnknownArchitecture, from_config
from generator.errors import CostpressError
from generator.escape import yaml_scalar

ENTRY_START = re.compile(r"^  - id: *(\S+) *$")
KEY = re.compile(r"^    ([a-z_]+):", re.M)


def read_config(path: Path) -> Architecture:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CostpressError(f"{path}: cannot read ({exc.strerror})") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise CostpressError(f"{path}: expected a JSON config.json ({exc})") from None
    except RecursionError:  # the decoder recurses once a level: thousands of nested brackets
        raise CostpressError(f"{path}: expected a JSON config.json (nested too deeply to read)") from None
    try:
        return from_config(config)
    except UnknownArchitecture as exc:
        raise CostpressError(f"{path}: {exc}") from None


def entry_text(
    model_id: str, name: str, arch: Architecture, published: int | None, source: str, url: str | None
) -> str:
    defaults = {f.name: f.default for f in dataclasses.fields(Architecture)}
    block = {k: v for k, v in dataclasses.asdict(arch).items() if k not in defaults or v != defaults[k]}
    inner = ", ".join(f"{k}: {yaml_scalar(v) if isinstance(v, str) else json.dumps(v)}" for k, v in block.items())
    lines = [f"  - id: {model_id}", f"    name: {yaml_scalar(name)}"]
    if published is not None:
        lines.append(f"    parameters: {published}")
    lines += [f"    architecture: {{{inner}}}", f"    source: {yaml_scalar(source)}"]
    if url:
        lines.append(f"    url: {url}")
    return "\n".join(lines) + "\n"


def merge(text: str, model_id: str, entry: str) -> tuple[str, bool]:
    """models.yaml with the entry for model_id replaced, or added at the end of the list; True if replaced."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if (m := ENTRY_START.match(line)) and m.group(1) == model_id), None)
    if start is None:
        if text and not text.endswith("\n"):
            text += "\n"
        return text + entry, False
    end = start + 1
    while end < len(lines) and lines[end].startswith("    "):
        end += 1
    # keys import-model does not write (weights_gb, say) stay as they were
    written = {m.group(1) for m in KEY.finditer(entry)}
    kept = [line for line in lines[start + 1 : end] if (m := KEY.match(line)) and m.group(1) not in written]
    return "".join(lines[:start]) + entry + "".join(kept) + "".join(lines[end:]), True
