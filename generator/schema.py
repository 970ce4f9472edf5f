"""Declarative schemas for content files, checked with every problem reported at once."""

from __future__ import annotations

import datetime as dt
import difflib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Path_ = tuple  # a path inside a document: ("offers", 2, "usd_per_hour")

ID_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*\Z")  # \Z: "$" also matches before a final line break
# The longest id or slug: it names a folder or a file, and file systems stop at 255 bytes a name
NAME_MAX = 80
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z")
# An address inside the site that a page once had (an alias): slugs joined by '/', a few levels deep
PATH_DEPTH = 6
TOKENS_RE = re.compile(r"^\s*([0-9][0-9_,]*(?:\.[0-9]+)?)\s*([kKmMbBtT]?)\s*$")
TOKEN_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}
MAX_FILE_BYTES = 1_000_000


def fmt_path(path: Path_) -> str:
    """Render ("offers", 2, "usd_per_hour") as offers[2].usd_per_hour."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def show(value: Any) -> str:
    """A short, safe rendering of a bad value for an error line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class Doc:
    """A parsed YAML document with the line of every node, and the problems found in it."""

    file: str
    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)
    line_offset: int = 0
    problems: list[str] = field(default_factory=list)

    def line(self, path: Path_) -> int | None:
        while True:
            if path in self.lines:
                return self.lines[path] + self.line_offset
            if not path:
                return None
            path = path[:-1]

    def problem(self, path: Path_, message: str) -> None:
        line = self.line(path)
        where = f"{self.file}:{line}" if line else self.file
        self.problems.append(f"{where}: {fmt_path(path)}: {message}")


def read_text(path: Path, display: str, problems: list[str]) -> str | None:
    """Read a content file as UTF-8 text, refusing empty, huge and binary files."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.append(f"{display}: cannot read file ({exc.strerror})")
        return None
    if len(raw) > MAX_FILE_BYTES:
        problems.append(f"{display}: file is {len(raw):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit")
        return None
    if b"\0" in raw:
        problems.append(f"{display}: expected a UTF-8 text file, found binary data")
        return None
    try:
        text = raw.decode("utf-8-sig")  # an editor's byte order mark (Windows Notepad, Excel) is not text
    except UnicodeDecodeError as exc:
        problems.append(f"{display}: expected UTF-8 text, bad byte at offset {exc.start}")
        return None
    if not text.strip():
        problems.append(f"{display}: file is empty")
        return None
    return text


_SCALAR_TAGS: dict[tuple[str, tuple[bool, bool]], str] = {}


class _Resolved:
    """A loader mixin that remembers which tag each plain or quoted scalar text resolves to.

    The C parser asks the (Python) resolver for every scalar, and the answer
    depends only on the text and whether it was quoted; a catalog of 200 price
    snapshots repeats the same few hundred texts 30,000 times.
    """

    def resolve(self, kind, value, implicit):
        if kind is not yaml.ScalarNode:
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = _SCALAR_TAGS.get(key)
        if tag is None:
            if len(_SCALAR_TAGS) > 100_000:
                _SCALAR_TAGS.clear()
            tag = _SCALAR_TAGS[key] = super().resolve(kind, value, implicit)
        return tag


_C_LOADER = getattr(yaml, "CSafeLoader", None)
FAST_LOADER = type("FastLoader", (_Resolved, _C_LOADER), {}) if _C_LOADER is not None else None


def parse_yaml(text: str, display: str, line_offset: int = 0) -> Doc:
    """Parse YAML with the safe loader, keeping each node's line for error messages.

    libyaml (CSafeLoader) parses valid files several times faster; any file it
    rejects is parsed again by the pure-Python loader, whose messages the error
    tests pin, so a bad file reads the same with or without libyaml.
    """
    if _may_nest(text):
        refused = _refuse_aliases_and_depth(text, display, line_offset)
        if refused is not None:
            return Doc(display, None, line_offset=line_offset, problems=[refused])
    if FAST_LOADER is not None:
        doc = _parse(text, display, line_offset, FAST_LOADER)
        if not doc.problems:
            return doc
    return _parse(text, display, line_offset, yaml.SafeLoader)


def nesting_problem(text: str, display: str) -> str | None:
    """The line parse_yaml reports for an alias or nesting past MAX_DEPTH in `text`, or None: for tools that
    edit a content file outside the build (import-model), so they refuse what the build would."""
    return _refuse_aliases_and_depth(text, display, 0) if _may_nest(text) else None


# Content needs a few levels of nesting and no aliases. An alias repeats a whole subtree (a 700-byte
# file of nested aliases expands to over a gigabyte), and nesting hundreds deep exhausts the stack.
MAX_DEPTH = 20
# What deep block nesting needs: a line that starts with 24 or more characters of indentation and of the
# indicators that open a node on the same line ("- - - x" nests three sequences with no indentation).
_DEEP_LINE = re.compile(r"^[ \t?:-]{24,}", re.M)
# A flow collection on one line holding no other collection, quoted text, comment, anchor or tag.
_FLAT_FLOW = re.compile(r"[\[{][^\[\]{}\n\"'#*&!|>]*[\]}]")
_FLOW = re.compile(r"[\[\]{}]")


def _may_nest(text: str) -> bool:
    """Whether `text` may hold an alias or nodes nested deeper than the block structure its lines show:
    anything but a text without `*` whose flow collections are each one flat `[...]` or `{...}` on one line.

    The scan below reads every parser event in Python: 0.036 s for the benchmark's 227 price snapshots,
    which write each offer as `{gpu: h100, count: 2, usd_per_hour: 5.00}`, against 0.054 s to parse them.
    This answers from the text. A bracket it cannot account for (in quotes, in a comment, in a collection
    that spans lines or holds another) sends the text to the scan.
    """
    if "*" in text or _DEEP_LINE.search(text):
        return True
    return _FLOW.search(text) is not None and _FLOW.search(_FLAT_FLOW.sub("", text)) is not None


_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _refuse_aliases_and_depth(text: str, display: str, line_offset: int) -> str | None:
    """One problem line for the first alias or the first node nested deeper than MAX_DEPTH, else None.

    Reads the parser's events (no tree is built, and neither the parser nor
    this loop recurses); a syntax error is left to the real parse to report.
    """
    loader = (_C_LOADER or yaml.SafeLoader)(text)
    depth = 0
    try:
        while True:
            event = loader.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return None
            line = event.start_mark.line + 1 + line_offset
            if isinstance(event, yaml.AliasEvent):
                return (
                    f"{display}:{line}: YAML alias *{event.anchor} is not allowed in content; "
                    "write the value out in full"
                )
            if isinstance(event, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    return f"{display}:{line}: YAML nested more than {MAX_DEPTH} levels deep; expected flatter data"
            elif isinstance(event, _CLOSE):
                depth -= 1
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def _parse(text: str, display: str, line_offset: int, loader_class) -> Doc:
    doc = Doc(display, None, line_offset=line_offset)
    loader = None
    try:
        loader = loader_class(text)
        node = loader.get_single_node()
        if node is None:
            doc.problems.append(f"{display}: file holds no YAML document")
            return doc
        doc.data = _construct(node, (), loader, doc)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{display}:{mark.line + 1 + line_offset}:{mark.column + 1}" if mark else display
        doc.problems.append(f"{where}: YAML syntax error: {exc.problem or exc.context}")
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, max(exc.position, 0)) + 1 + line_offset
        doc.problems.append(f"{display}:{line}: expected printable text, found character #x{exc.character:04x}")
    except yaml.YAMLError as exc:
        doc.problems.append(f"{display}: YAML error: {' '.join(str(exc).split())}")
    finally:
        if loader is not None:
            loader.dispose()
    return doc


STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
# Plain decimal numbers, which PyYAML's constructors turn into int(text) and float(text) (its
# sign handling gives the same values); anything else (1_000, 0o17, 0x1f, 1:30, .inf) goes to them.
PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
PLAIN_FLOAT = re.compile(r"-?[0-9]+\.[0-9]*")


def _construct(node: yaml.Node, path: Path_, loader: yaml.SafeLoader, doc: Doc) -> Any:
    doc.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            try:
                key = key_node.value if key_node.tag == STR_TAG else loader.construct_object(key_node, deep=True)
            except (ValueError, yaml.YAMLError):
                key = key_node.value
            if not isinstance(key, str):
                doc.problem(path, f"expected text keys, got {show(key)}")
                continue
            if key in out:
                doc.lines[path + (key,)] = key_node.start_mark.line + 1
                doc.problem(path + (key,), "key appears twice")
                continue
            doc.lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = _construct(value_node, path + (key,), loader, doc)
            doc.lines[path + (key,)] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(item, path + (i,), loader, doc) for i, item in enumerate(node.value)]
    tag = node.tag
    if tag == STR_TAG:  # what the constructor returns for a string: its text (most scalars are strings)
        return node.value
    if tag == FLOAT_TAG and PLAIN_FLOAT.fullmatch(node.value):  # prices: what construct_yaml_float returns
        return float(node.value)
    if tag == INT_TAG and PLAIN_INT.fullmatch(node.value):
        return int(node.value)
    try:
        return loader.construct_object(node, deep=True)
    except ValueError as exc:  # e.g. 2026-02-30 matches the timestamp pattern
        doc.problem(path, f"expected a valid value, got {node.value!r} ({exc})")
        return INVALID


class _Invalid:
    """Marks a value the parser already reported, so validation does not report it again."""

    def __repr__(self) -> str:
        return "<invalid>"


INVALID = _Invalid()


# --- field specs -------------------------------------------------------------


@dataclass(frozen=True)
class F:
    """One field: its kind, whether it is required, and nested specs."""

    kind: str
    required: bool = True
    record: dict[str, F] | None = None  # for kind "record"
    item: F | None = None  # for kind "list"
    choices: tuple[str, ...] = ()
    default: Any = None
    most: float | None = None  # a ceiling for numbers (default NUMBER_CEILING); for a list, its most entries
    nonempty: bool = False  # an optional list that, when given, needs an entry (an empty one would mean nothing)


# Entries of a list a page turns into table rows or chart points (token budgets, chart tokens): 3,000 token
# budgets in a family made 5.4 million table rows over its 1,809 pages and a 560 MB build.
MAX_ROWS = 100

# Tags an article or a family may have. Each tag gets a page and a feed, and every feed entry lists its page's
# tags: 5,000 tags on one article made 5,000 feeds of 125 KB (650 MB) and a 1.3 GB build.
MAX_TAGS = 50

# Earlier addresses one page may keep (aliases): each is a small page of its own
MAX_ALIASES = 50

URL_RE = re.compile(r"^https?://[^\s<>\"']+\Z")


def opt(kind: str, **kw: Any) -> F:
    return F(kind, required=False, **kw)


def record(fields: dict[str, F], required: bool = True) -> F:
    return F("record", required=required, record=fields)


def list_of(item: F, required: bool = True, most: int | None = None, nonempty: bool = False) -> F:
    """A list of `item`s; with `most`, of at most that many; `nonempty`: left out or with an entry."""
    return F("list", required=required, item=item, most=most, nonempty=nonempty)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def parse_tokens(value: Any) -> int | None:
    """Accept 20000000, 20_000_000, '20M', '1.5B'; return None when it is not a token count."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value <= TOKENS_CEILING else None
    if isinstance(value, float):
        return int(value) if 0 < value <= TOKENS_CEILING and value.is_integer() else None
    if not isinstance(value, str):
        return None
    m = TOKENS_RE.match(value)
    if not m:
        return None
    number = float(m.group(1).replace("_", "").replace(",", ""))
    total = number * TOKEN_SUFFIX[m.group(2).lower()]
    if not 0 < total <= TOKENS_CEILING or not float(total).is_integer():
        return None
    return int(total)


# No figure costpress shows needs more; anything larger is a typo or an attack, and would
# overflow a float (10**400) or print as nonsense.
NUMBER_CEILING = 1e15
# Below this a positive input is a typo: figures divided by it would overflow.
NUMBER_FLOOR = 1e-6
TOKENS_CEILING = 10**15

EXPECT = {
    "text": "non-empty text without control characters or line breaks",
    "para": "non-empty text without control characters",
    "id": "an id of lower-case letters, digits, '.' and '-'",
    "slug": "a slug of lower-case letters, digits and single '-'",
    "path": f"an address in the site: up to {PATH_DEPTH} slugs joined by '/', such as old-name or /2025/old-name/",
    "positive": "a positive number",
    "nonnegative": "a number of zero or more",
    "share": "a share above 0 and at most 1",
    "count": "a whole number of 1 or more",
    "date": "a date as YYYY-MM-DD",
    "url": "an http(s) URL",
    "tokens": "a token count such as 20M, 1.5B or 20_000_000",
    "bool": "true or false",
    "choice": "one of",
}


def validate(doc: Doc, value: Any, spec: F, path: Path_ = ()) -> Any:
    """Check value against spec, record problems in doc, and return the cleaned value."""
    kind = spec.kind
    if value is INVALID:
        return None
    if kind == "record":
        if not isinstance(value, dict):
            doc.problem(path, f"expected a mapping, got {show(value)}")
            return None
        assert spec.record is not None
        out = {}
        for key in value:
            if key not in spec.record:
                close = difflib.get_close_matches(key, list(spec.record), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                allowed = ", ".join(spec.record)
                doc.problem(path + (key,), f"unknown key{hint}; expected one of: {allowed}")
        for name, sub in spec.record.items():
            if value.get(name) is INVALID:
                out[name] = None
                continue
            if name not in value or value[name] is None:
                if sub.required:
                    doc.problem(path + (name,), f"missing; expected {_expect(sub)}")
                # a required list left out is reported above and read as empty, as one of another shape is:
                # code that goes on to find more problems walks it (it stopped at None with a traceback)
                out[name] = [] if sub.required and sub.kind == "list" else sub.default
                continue
            out[name] = validate(doc, value[name], sub, path + (name,))
        return out
    if kind == "list":
        if not isinstance(value, list):
            doc.problem(path, f"expected a list, got {show(value)}")
            return []
        if spec.required and not value:
            doc.problem(path, "expected at least one entry, got an empty list")
        elif spec.nonempty and not value:
            assert spec.item is not None
            some = f"one of {', '.join(spec.item.choices)}" if spec.item.kind == "choice" else "one entry"
            doc.problem(path, f"expected at least {some} (or leave it out for the default)")
        if spec.most is not None and len(value) > spec.most:
            doc.problem(path, f"expected at most {spec.most:,} entries, got {len(value):,}")
            return []
        assert spec.item is not None
        return [validate(doc, item, spec.item, path + (i,)) for i, item in enumerate(value)]
    if kind == "any":
        return value
    ok, cleaned = _check_scalar(kind, value, spec)
    if not ok:
        doc.problem(
            path, f"expected {_expect(spec)}{_range_note(spec, value)}, got {show(value)}{_text_note(spec, value)}"
        )
        return None
    return cleaned


def validate_whole(doc: Doc, value: Any, spec: F) -> Any:
    """validate, or None when it found any problem: a value that failed is left as None, or a list of the
    wrong shape as empty, at any depth, and code that computes with the rest would meet it (for a file whose
    records are used whole, as a family's front matter is). Its problems are recorded in doc as validate's."""
    found = len(doc.problems)
    data = validate(doc, value, spec)
    return None if len(doc.problems) > found else data


def _range_note(spec: F, value: Any) -> str:
    """For a number of the right sign but beyond the bounds: the bounds, in words."""
    if not _is_number(value) or spec.kind not in ("positive", "nonnegative", "count"):
        return ""
    most = spec.most or NUMBER_CEILING
    if isinstance(value, int) and value > most or isinstance(value, float) and most < value < math.inf:
        exponent = math.log10(most)  # 10^5, not the 10^05 that formatting 1e+05 gave
        return f" up to 10^{round(exponent)}" if exponent.is_integer() else f" up to {most:,g}"
    if spec.kind == "positive" and 0 < value < NUMBER_FLOOR:
        return f" of at least {NUMBER_FLOOR:f}".rstrip("0")
    return ""


# A number in exponent form that YAML 1.1 (PyYAML) reads as text: no decimal point, or no sign on the exponent
TEXT_NUMBER = re.compile(r"([-+]?[0-9]+)(?:\.([0-9]*))?[eE]([-+]?)([0-9]+)")


def _text_note(spec: F, value: Any) -> str:
    """For '1e308' given where a number goes: how to write it so that YAML reads a number."""
    m = TEXT_NUMBER.fullmatch(value) if isinstance(value, str) else None
    if m is None or spec.kind not in ("positive", "nonnegative", "share"):
        return ""
    whole, decimals, sign, exponent = m.groups()
    return f" (YAML reads it as text; write {whole}.{decimals or 0}e{sign or '+'}{exponent})"


def _expect(spec: F) -> str:
    if spec.kind == "choice":
        return "one of " + ", ".join(repr(c) for c in spec.choices)
    if spec.kind == "record":
        return "a mapping with " + ", ".join(k for k, f in (spec.record or {}).items() if f.required)
    if spec.kind == "list":
        return "a list"
    return EXPECT.get(spec.kind, spec.kind)


# Control characters, lone surrogates, bidirectional overrides and isolates (which can make a
# title read differently from its bytes) and zero-width characters (which hide in names and ids).
INVISIBLE = "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
CONTROL_RE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff{INVISIBLE}]")
LINE_RE = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff{INVISIBLE}]")  # CR, LF and tab too


def is_name(value: object, kind: str) -> bool:
    """Whether `value` is an id ("id": letters, digits, '.' and '-') or a slug ("slug": no '.'), at most
    NAME_MAX characters: what content, and a command's --id or --provider, may name a record or a file."""
    pattern = ID_RE if kind == "id" else SLUG_RE
    return isinstance(value, str) and len(value) <= NAME_MAX and bool(pattern.match(value))


def _has_control(text: str) -> bool:
    """Control characters and lone surrogates have no place in published text."""
    return CONTROL_RE.search(text) is not None


def _check_scalar(kind: str, v: Any, spec: F) -> tuple[bool, Any]:
    if kind == "text":
        return (isinstance(v, str) and bool(v.strip()) and LINE_RE.search(v) is None), v
    if kind == "para":
        return (isinstance(v, str) and bool(v.strip()) and not _has_control(v)), v
    if kind in ("id", "slug"):
        return is_name(v, kind), v
    if kind == "path":  # written as an address too: /old-name/ is old-name
        path = v.removeprefix("/").removesuffix("/") if isinstance(v, str) else ""
        parts = path.split("/")
        return len(parts) <= PATH_DEPTH and all(is_name(part, "slug") for part in parts), path
    if kind in ("positive", "nonnegative", "share"):
        if not _is_number(v) or abs(v) > (spec.most or NUMBER_CEILING) or not math.isfinite(v):
            return False, v
        if kind == "positive":
            return v >= NUMBER_FLOOR, v
        if kind == "nonnegative":
            return v >= 0, v
        return 0 < v <= 1, v
    if kind == "count":
        return (isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= (spec.most or NUMBER_CEILING)), v
    if kind == "date":
        return (isinstance(v, dt.date) and not isinstance(v, dt.datetime)), v
    if kind == "url":
        return (isinstance(v, str) and URL_RE.match(v) is not None), v
    if kind == "tokens":
        n = parse_tokens(v)
        return n is not None, n
    if kind == "bool":
        return isinstance(v, bool), v
    if kind == "choice":
        return v in spec.choices, v
    raise AssertionError(f"unknown field kind {kind}")
