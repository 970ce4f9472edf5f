"""Page building blocks handed from article contexts to templates: tables, charts, code."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from generator import formatting


class Column(NamedTuple):
    """A table column. A tuple, so templates can unpack it in a loop:
    `{% for key, label, fmt, numeric in block.columns %}` costs no attribute
    lookups, where `col.key` per cell was most of a table's rendering time."""

    key: str
    label: str
    fmt: str = "text"  # a name in formatting.FILTERS, or "text"
    numeric: bool = False


@functools.lru_cache(maxsize=4096)
def _shown(column: Column) -> Column:
    label = formatting.keep_units(formatting.sentence(column.label))
    return column if label == column.label else column._replace(label=label)


@dataclass
class Table:
    id: str
    caption: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    note: str | None = None

    def __post_init__(self) -> None:
        # A caption and a column heading read as the start of a sentence ("Full fine-tune, AdamW on ..."),
        # with numbers kept by their units as pages show them: made once here, not for every cell's
        # label on a phone (CSV headers turn the non-breaking spaces back into plain ones).
        self.caption = formatting.keep_units(formatting.sentence(self.caption))
        self.columns = [_shown(c) for c in self.columns]

    @property
    def wide(self) -> bool:
        """Six or more columns: on a wide screen the table may use more than the text's width."""
        return len(self.columns) > 5


@dataclass
class Chart:
    id: str
    title: str
    figure: dict[str, Any]  # plotly figure as plain JSON-able data
    table: Table  # the same numbers, for readers and engines without JavaScript

    def __post_init__(self) -> None:
        self.title = formatting.sentence(self.title)


@dataclass
class Code:
    id: str
    language: str
    text: str
    output: str | None = None  # what the code prints when run, if it is a program


@dataclass
class Input:
    """One input figure a page relies on, with where it comes from."""

    what: str
    number: float
    fmt: str  # a format name, as for table columns
    unit: str  # shown after the number; '' when the format carries it ($, %)
    source: str
    url: str | None = None
    date: str | None = None

    @functools.cached_property  # pages of a family share their Input objects, and both targets print it
    def value(self) -> str:
        text = formatting.cell(self.number, self.fmt)
        return f"{text} {self.unit}" if self.unit else text


@dataclass
class Figure:
    """One number a page shows, for site/figures.json."""

    id: str
    value: float
    unit: str
    inputs: tuple[str, ...] = ()


@dataclass
class Blocks:
    tables: dict[str, Table] = field(default_factory=dict)
    charts: dict[str, Chart] = field(default_factory=dict)
    code: dict[str, Code] = field(default_factory=dict)

    def add(self, block: Table | Chart | Code) -> None:
        target = {Table: self.tables, Chart: self.charts, Code: self.code}[type(block)]
        if block.id in target:
            raise AssertionError(f"block id used twice: {block.id}")
        target[block.id] = block
