"""Text from data made safe for where it lands: Markdown, JSON inside a script, a link, YAML front matter,
CSV cells a spreadsheet cannot run as formulas. Templates reach these as filters (render.py)."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from markupsafe import Markup

from generator import formatting
from generator.charts import Shared

MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#])")
# Text md_escape leaves as it is: words of no special character and no white space, single spaces between.
MD_PLAIN = re.compile(r"[^\\`*_\[\]<>|~&#\s]+(?: [^\\`*_\[\]<>|~&#\s]+)*")


def md_escape(value: Any) -> str:
    """Escape a data string so Markdown shows it literally, on one line."""
    return md_escape_text(str(value))


# Caches of text hold a few thousand entries: most misses are a page's own text, which never comes
# back, and caps of 65,536 and more filled each worker of a 100,000-page build with 130 MB of it.
@functools.lru_cache(maxsize=16_384)  # about 70 calls a family page, on a few hundred distinct strings
def md_escape_text(text: str) -> str:
    if MD_PLAIN.fullmatch(text):  # most misses are numbers a table shows: nothing to escape or join
        return text
    return MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def md_cell(value: Any) -> str:
    return md_escape(value)


def json_encoder(item_separator: str = ", ", key_separator: str = ": ") -> Callable[[Any], str]:
    """What json.dumps(sort_keys=True, ensure_ascii=False, allow_nan=False) returns, from one reusable encoder.

    json.dumps builds a new encoder on every call made with options; at a few
    dozen small calls a page that was most of the cost of figures.json. The C
    encoder is made once here when the interpreter has it.
    """
    slow = json.JSONEncoder(
        sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(item_separator, key_separator)
    )
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return slow.encode
    # arguments: markers, default, string encoder, indent, separators, sort_keys, skipkeys, allow_nan
    fast = make(
        None, slow.default, json.encoder.encode_basestring, None, key_separator, item_separator, True, False, False
    )
    return lambda value: "".join(fast(value, 0))


_compact_json = json_encoder(",", ":")


def json_script(data: Any) -> Markup:
    """JSON safe inside <script>: no '<', '>', '&' or line separators in the text."""
    if type(data) is Shared:  # a chart layout many pages share: written once
        if data.json is None:
            data.json = _json_script(data)
        return data.json
    return _json_script(data)


def _json_script(data: Any) -> Markup:
    text = _compact_json(data)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return Markup(text)


def safe_url(value: Any) -> Markup:
    """A link target from data: http(s) only, nothing that could break out of Markdown or HTML."""
    text = str(value)
    if not re.match(r"^https?://[^\s<>\"'()\\]+\Z", text):
        raise ValueError(f"refusing to link to {text!r}: expected an http(s) URL")
    return Markup(text)


CSV_RISKY = ("=", "+", "-", "@", "\t", "\r", "\n")


def table_csv(table, texts=None) -> bytes:
    """A table as CSV: unrounded numbers, and text that a spreadsheet cannot run as a formula. With `texts`
    (listingcache.RowTexts, a listing's table), each row's line is kept from the last build or made alone."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    columns = [(col.key, col.numeric, col.fmt) for col in table.columns]
    writer.writerow([csv_text(c.label) for c in table.columns])

    def cells(row) -> list[str]:
        return [
            ""
            if (value := row.get(key)) is None
            else _csv_number(value)
            if numeric
            else _csv_cell(value, fmt)
            if type(value) is str
            else csv_text(formatting.data_cell(value, fmt))
            for key, numeric, fmt in columns
        ]

    if texts is None:
        writer.writerows(map(cells, table.rows))
        return buf.getvalue().encode("utf-8")
    head = buf.getvalue()
    line_buf = io.StringIO()
    line_writer = csv.writer(line_buf, lineterminator="\n")

    def line(row) -> str:
        line_writer.writerow(cells(row))
        text = line_buf.getvalue()
        line_buf.seek(0)
        line_buf.truncate()
        return text

    rows = table.rows
    parts = [head]
    for start in range(0, len(rows), CSV_RUN):
        parts += texts.each("csv", rows[start : start + CSV_RUN], line)
    return "".join(parts).encode("utf-8")


CSV_RUN = 2000  # a listing's rows whose CSV lines go to the listing cache as one record


@functools.lru_cache(maxsize=16_384)  # names, setups and memory notes repeat down a listing's 18,000 rows
def _csv_cell(value: str, fmt: str) -> str:
    return csv_text(formatting.data_cell(value, fmt))


@functools.lru_cache(maxsize=65_536)  # token counts and hours repeat across a family's tables
def _csv_number(value) -> str:
    return repr(round(float(value), 6))


def csv_text(text: str) -> str:
    """Text a spreadsheet shows as text: a formula start, even behind white space or a line break, is quoted.
    Non-breaking spaces and hyphens (kept between numbers and units on pages) are plain in data files."""
    text = text.replace(formatting.NBSP, " ").replace(formatting.NBHY, "-")
    if text.startswith(CSV_RISKY) or text[:1].isspace() and text.lstrip().startswith(CSV_RISKY):
        return "'" + text
    return text


PAGE_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def page_link(slug: Any) -> Markup:
    """Relative link from one article page to another article's page."""
    return _page_link(str(slug))


@functools.lru_cache(maxsize=65_536)  # a family page links the same few neighbours as the rest of its group
def _page_link(text: str) -> Markup:
    if not PAGE_SLUG.fullmatch(text):
        raise ValueError(f"not a page slug: {text!r}")
    return Markup(f"../{text}/index.html")


YAML_BREAKS = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")


def yaml_str(value: Any) -> str:
    """A double-quoted YAML scalar (JSON syntax) with YAML's extra line breaks escaped too.

    The JSON string is what json.dumps(text, ensure_ascii=False) writes, from
    the C escaper it calls (json.dumps builds an encoder per call).
    """
    text = json.encoder.encode_basestring(str(value))
    if YAML_BREAKS.search(text) is None:
        return text
    return YAML_BREAKS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def yaml_scalar(text: str) -> str:
    """`text` as the value of a YAML mapping key, as simply as it reads back: plain when YAML reads it back
    the same (no flow characters, which read differently inside a flow mapping), else double-quoted."""
    import yaml

    try:
        plain = yaml.safe_load(f"x: {text}")
    except yaml.YAMLError:
        plain = None
    if plain == {"x": text} and not any(c in text for c in "{}[],"):
        return text
    return yaml_str(text)


def slug_of(text: str) -> str:
    """The URL-safe name of a tag or a heading: lower-case ASCII letters and digits joined by '-', accents
    dropped from the letters they sit on ('über' → 'uber'); '' when nothing is left ('🚀')."""
    if not text.isascii():  # a letter and its accents apart, the accents left out; anything else separates
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def slugify(text: str) -> str:
    """slug_of, or "section" for a heading with nothing to make one of."""
    return slug_of(text) or "section"
