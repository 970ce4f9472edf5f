"""`costpress import-model`: a Hugging Face config.json into an entry of content/models.yaml.

The entry holds the architecture block (what engine.architecture counts
from) and, when given, the published parameter total, which the build checks
against the computed count. An existing entry with the same id is updated
in place, found as YAML reads the file; the rest of the file (comments included) is kept as it is.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import yaml

from generator.engine.architecture import Architecture, UnknownArchitecture, from_config
from generator.errors import CostpressError
from generator.escape import yaml_scalar
from generator.schema import nesting_problem

ORDER = ("name", "parameters", "architecture", "source", "url")  # the keys import-model writes, as it writes them


def read_config(path: Path) -> Architecture:
    try:
        config = json.loads(path.read_text(encoding="utf-8-sig"))
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


def entry_keys(
    name: str | None, arch: Architecture, published: int | None, source: str | None, url: str | None
) -> dict[str, str]:
    """The keys import-model writes, each as the YAML text of its value, in ORDER; a key given as None is left
    out (an entry that is there keeps its own)."""
    defaults = {f.name: f.default for f in dataclasses.fields(Architecture)}
    block = {k: v for k, v in dataclasses.asdict(arch).items() if k not in defaults or v != defaults[k]}
    inner = ", ".join(f"{k}: {yaml_scalar(v) if isinstance(v, str) else json.dumps(v)}" for k, v in block.items())
    keys = {
        "name": None if name is None else yaml_scalar(name),
        "parameters": None if published is None else str(published),
        "architecture": f"{{{inner}}}",
        "source": None if source is None else yaml_scalar(source),
        "url": url or None,
    }
    return {k: v for k, v in keys.items() if v is not None}


def entry_text(model_id: str, keys: dict[str, str], dash: int = 2, indent: int = 4) -> str:
    """A new entry: `- id:` at column `dash`, its other keys at column `indent`."""
    lines = [" " * dash + f"- id: {model_id}"] + [" " * indent + f"{k}: {keys[k]}" for k in _in_order(keys)]
    return "\n".join(lines) + "\n"


class Unmergeable(Exception):
    """models.yaml is laid out in a way import-model does not edit; `entry` is the text to add by hand."""

    def __init__(self, message: str, entry: str = "") -> None:
        super().__init__(message)
        self.entry = entry


def merge(
    text: str, model_id: str, keys: dict[str, str], where: str, if_new: dict[str, str] | None = None
) -> tuple[str, bool]:
    """models.yaml with the entry for model_id updated, or added after the list's last entry; True if it was there.

    The entry is found by YAML's own reading of the file, so any indentation works. An entry that is there
    keeps what import-model does not write: its other keys, its comments, and the order of its keys. Each
    key given replaces that key's value (all its lines) where it stands; a key the entry lacked goes after
    the keys that come before it in ORDER. A new entry also takes `if_new` (a default source) and must have a
    name. The result is read back and must hold the same models with only this entry changed, as intended;
    if not (a layout this cannot edit), Unmergeable holds the entry to add by hand. A file with aliases or
    deep nesting is refused with the build's own message.
    """
    refused = nesting_problem(text, where)
    if refused is not None:
        raise CostpressError(refused)
    lines = text.splitlines(keepends=True)
    try:
        seq = _models_node(text, where)
        target = next((item for item in seq.value if _id_of(item) == model_id), None)
        if target is None:
            if "name" not in keys:
                raise CostpressError(f"--name: needed for a model that is not in {where} yet, e.g. --name 'My Model'")
            keys = {**(if_new or {}), **keys}
            merged = _appended(lines, seq, model_id, keys)
        else:
            if target.flow_style:
                raise Unmergeable(f"{where}: the entry of {model_id!r} is written in braces; write it one key a line")
            merged = _updated(lines, target, keys)
        _check(text, merged, model_id, keys, where)
    except Unmergeable as exc:
        exc.entry = entry_text(model_id, keys)
        raise
    return merged, target is not None


def _models_node(text: str, where: str) -> yaml.SequenceNode:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        raise CostpressError(f"{where}: not valid YAML{at}; fix it, then import again") from None
    except RecursionError:  # the composer recurses once a level
        raise CostpressError(f"{where}: nested too deeply to read; fix it, then import again") from None
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if key.value == "models" and isinstance(value, yaml.SequenceNode) and value.value and not value.flow_style:
                return value
    raise Unmergeable(f"{where}: expected a `models:` list with one entry a line or more")


def _id_of(item: yaml.Node) -> str | None:
    if isinstance(item, yaml.MappingNode):
        for key, value in item.value:
            if key.value == "id" and isinstance(value, yaml.ScalarNode):
                return value.value
    return None


def _end(lines: list[str], node: yaml.Node, start: int, outside: int) -> int:
    """The index of the line after the node's last line. A block collection's end is where the next token
    starts; blank lines and comments indented `outside` columns or fewer before that are not the node's."""
    mark = node.end_mark
    on_line = lines[mark.line][: mark.column] if mark.line < len(lines) else ""
    end = mark.line + 1 if on_line.strip() else mark.line
    while end - 1 > start:
        line = lines[end - 1]
        if line.strip() and not (line.lstrip().startswith("#") and len(line) - len(line.lstrip()) <= outside):
            break
        end -= 1
    return end


def _newline(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"


def _updated(lines: list[str], item: yaml.MappingNode, keys: dict[str, str]) -> str:
    """The entry's keys replaced where they stand, and the keys it lacked added after their predecessors."""
    nl = _newline(lines[item.start_mark.line])
    indent = " " * item.value[0][0].start_mark.column
    spans = {}  # key -> (first line, line after its value)
    for key, value in item.value:
        spans[key.value] = (key.start_mark.line, _end(lines, value, key.start_mark.line, len(indent)))
    edits = []  # (first line, line after, order, new lines): made from the bottom up, keys at one place in ORDER
    for n, k in enumerate(_in_order(keys)):
        text = [f"{indent}{k}: {keys[k]}{nl}"]
        if k in spans:
            edits.append((*spans[k], n, text))
        else:
            at = max(spans[b][1] for b in ("id",) + ORDER[: ORDER.index(k)] if b in spans)
            edits.append((at, at, n, text))
    out = list(lines)
    for first, after, _, new in sorted(edits, reverse=True):
        if first == after and first > 0 and not out[first - 1].endswith("\n"):
            out[first - 1] += nl
        out[first:after] = new
    return "".join(out)


def _in_order(keys: dict[str, str]) -> list[str]:
    """The keys as import-model writes them: in ORDER."""
    return sorted(keys, key=ORDER.index)


def _appended(lines: list[str], seq: yaml.SequenceNode, model_id: str, keys: dict[str, str]) -> str:
    """A new entry after the list's last, indented as the list's first entry is."""
    first, last = seq.value[0], seq.value[-1]
    line = lines[first.start_mark.line]
    nl, dash = _newline(line), len(line) - len(line.lstrip(" "))
    block = isinstance(first, yaml.MappingNode) and first.value and not first.flow_style
    indent = first.value[0][0].start_mark.column if block else dash + 2
    at = _end(lines, last, last.start_mark.line, dash)
    out = list(lines)
    if at > 0 and not out[at - 1].endswith("\n"):
        out[at - 1] += nl
    out[at:at] = [entry_text(model_id, keys, dash, indent).replace("\n", nl)]
    return "".join(out)


def _check(text: str, merged: str, model_id: str, keys: dict[str, str], where: str) -> None:
    """The edit did what it should: every other model as it was, this one with exactly the keys given."""

    def models(t: str) -> list:
        try:
            return list(yaml.safe_load(t)["models"])
        except (yaml.YAMLError, TypeError, KeyError, RecursionError):
            return []

    old, new = models(text), models(merged)
    given = yaml.safe_load(entry_text(model_id, keys))[0]
    entry = next((m for m in old if isinstance(m, dict) and m.get("id") == model_id), None)
    expected = [({**m, **given} if m is entry else m) for m in old] + ([] if entry is not None else [given])
    if new != expected:
        raise Unmergeable(f"{where}: its layout is not one import-model can edit safely")
