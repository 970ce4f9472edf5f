"""`costpress import-model`: a Hugging Face config.json into an entry of content/models.yaml.

The entry holds the architecture block (what engine.architecture counts
from) and, when given, the published parameter total, which the build checks
against the computed count. An existing entry with the same id is updated
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
ORDER = ("name", "parameters", "architecture", "source", "url")  # the keys import-model writes, as it writes them


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
    model_id: str, name: str | None, arch: Architecture, published: int | None, source: str | None, url: str | None
) -> str:
    """The entry's text, its keys in this order; a key given as None is left out (merge keeps the entry's own)."""
    defaults = {f.name: f.default for f in dataclasses.fields(Architecture)}
    block = {k: v for k, v in dataclasses.asdict(arch).items() if k not in defaults or v != defaults[k]}
    inner = ", ".join(f"{k}: {yaml_scalar(v) if isinstance(v, str) else json.dumps(v)}" for k, v in block.items())
    lines = [f"  - id: {model_id}"]
    if name is not None:
        lines.append(f"    name: {yaml_scalar(name)}")
    if published is not None:
        lines.append(f"    parameters: {published}")
    lines.append(f"    architecture: {{{inner}}}")
    if source is not None:
        lines.append(f"    source: {yaml_scalar(source)}")
    if url:
        lines.append(f"    url: {url}")
    return "\n".join(lines) + "\n"


def find(lines: list[str], model_id: str) -> int | None:
    """The index of the line that opens model_id's entry (`  - id: ID`), or None."""
    return next((i for i, line in enumerate(lines) if (m := ENTRY_START.match(line)) and m.group(1) == model_id), None)


def merge(text: str, model_id: str, entry: str) -> tuple[str, bool]:
    """models.yaml with the entry for model_id updated, or added at the end of the list; True if it was there.

    An entry that is there keeps what import-model does not write: its other keys, its comments, the lines
    of a value written over several lines, and the order of its keys. Each key the new entry has replaces
    that key (with all its lines) where it stands; a key the entry lacked goes after the keys that come
    before it in ORDER.
    """
    ended = text + "\n" if text and not text.endswith("\n") else text
    lines = ended.splitlines(keepends=True)
    start = find(lines, model_id)
    if start is None:
        return ended + entry, False
    end = _entry_end(lines, start)
    new = dict(_segments(entry.splitlines(keepends=True)[1:]))
    merged = [
        (key, _replaced(part, new.pop(key)) if key in new else part) for key, part in _segments(lines[start + 1 : end])
    ]
    for key, part in new.items():  # keys the entry did not have, after those that precede them in ORDER
        before = set(ORDER[: ORDER.index(key)])
        at = max((i + 1 for i, (k, _) in enumerate(merged) if k in before), default=0)
        merged.insert(at, (key, part))
    body = "".join(line for _, part in merged for line in part)
    merged_text = "".join(lines[: start + 1]) + body + "".join(lines[end:])
    return (text if merged_text == ended else merged_text), True  # unchanged, last newline or not


def _entry_end(lines: list[str], start: int) -> int:
    """The index after the entry's last line: lines indented under it, and blank lines between them."""
    end = last = start + 1
    while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
        if lines[end].strip():
            last = end + 1
        end += 1
    return last


def _segments(lines: list[str]) -> list[tuple[str | None, list[str]]]:
    """An entry's lines after its id, as (key, lines): a key's line with the lines of its value under it;
    a comment or blank line standing alone between keys is a segment of its own, without a key."""
    out: list[tuple[str | None, list[str]]] = []
    for line in lines:
        m = KEY.match(line)
        if m:
            out.append((m.group(1), [line]))
        elif out and out[-1][0] is not None and (line.startswith("     ") or not line.strip()):
            out[-1][1].append(line)  # the value goes on under its key
        else:
            out.append((None, [line]))
    return out


def _replaced(old: list[str], new: list[str]) -> list[str]:
    """A key's new lines, followed by the blank lines that closed its old value (spacing, not value)."""
    kept = len(old)
    while kept > 1 and not old[kept - 1].strip():
        kept -= 1
    return new + old[kept:]
