"""Property-based tests: arbitrary snapshots and article text either build into parseable output or
fail through the clear-error path. Never a traceback, never a partial site.

Seeded (derandomize) and bounded, so CI runs the same examples every time.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

import yaml
from bs4 import BeautifulSoup
from conftest import CONTENT, KEPT_STATE, TEMPLATES, make_content, read_tree, run_cli
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from generator.build import render_site
from generator.publish import publish

# No shrinking phase: a failing example is reported as generated, which keeps a red run short.
SETTINGS = settings(
    max_examples=20,
    derandomize=True,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

GPUS = ["a100-80gb", "h100", "h200", "b200", "dgx-spark", "l40s"]
numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0.01, max_value=500),
    st.integers(min_value=-5, max_value=10**12),
    st.text(max_size=8),
    st.none(),
)
offer = st.fixed_dictionaries(
    {
        "gpu": st.one_of(st.sampled_from(GPUS), st.text(max_size=12)),
        "count": st.one_of(st.integers(-2, 64), st.text(max_size=3)),
        "usd_per_hour": numbers,
    },
    optional={
        "spot_usd_per_hour": numbers,
        "region": st.text(max_size=20),
        "notes": st.text(max_size=40),
        "confirmed": st.booleans(),
    },
)
snapshot = st.fixed_dictionaries(
    {
        "provider": st.just("nodus"),
        "name": st.text(min_size=1, max_size=40),
        "checked": st.just("2026-11-05"),
        "source": st.text(max_size=60),
        "currency": st.sampled_from(["USD", "USD", "EUR"]),
        "offers": st.lists(offer, max_size=7),
    },
)

REQUIRED_NODUS = [
    {"gpu": "a100-80gb", "count": 1, "usd_per_hour": 1.09},
    {"gpu": "h100", "count": 1, "usd_per_hour": 2.60},
    {"gpu": "b200", "count": 1, "usd_per_hour": 5.50},
    {"gpu": "b200", "count": 8, "usd_per_hour": 44.00},
    {"gpu": "h200", "count": 8, "usd_per_hour": 28.74},
]

_published: dict = {}


def published_site(root: Path) -> Path:
    out = root / "site"
    if "files" not in _published:
        with tempfile.TemporaryDirectory() as tmp:
            _published["files"] = render_site(make_content(Path(tmp)), TEMPLATES).files
    publish(_published["files"], out)
    return out


def check_outcome(result, out: Path, before: dict) -> None:
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 1:
        lines = [line for line in result.output.splitlines() if line]
        assert lines and all(
            line.startswith(("error: ", "warning: ")) or "nothing was written" in line for line in lines
        ), result.output
        assert read_tree(out) == before
        return
    assert not [p for p in out.parent.glob(".site.*") if p.name not in KEPT_STATE]
    for path in out.rglob("*"):
        if path.suffix == ".html":
            soup = BeautifulSoup(path.read_text(), "html.parser")
            for ld in soup.find_all("script", type="application/ld+json"):
                json.loads(ld.string)
        elif path.suffix == ".md":
            yaml.safe_load(path.read_text().split("---\n")[1])
        elif path.suffix == ".json":
            json.loads(path.read_text())
        elif path.suffix == ".csv":
            list(csv.reader(io.StringIO(path.read_text())))


@SETTINGS
@given(snap=snapshot, keep_required=st.booleans())
def test_arbitrary_snapshots(snap, keep_required):
    if keep_required:
        snap = {**snap, "offers": REQUIRED_NODUS + snap["offers"]}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        content = make_content(root, {"prices/nodus/2026-11-05.yaml": yaml.safe_dump(snap, allow_unicode=True)})
        out = published_site(root)
        before = read_tree(out)
        result = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES))
        check_outcome(result, out, before)


@SETTINGS
@given(
    title=st.text(min_size=1, max_size=80),
    description=st.text(max_size=120),
    tag=st.text(max_size=20),
    raw=st.booleans(),
)
def test_arbitrary_article_text(title, description, tag, raw):
    path = CONTENT / "articles" / "dgx-spark-70b-qlora-cost.md"
    text = path.read_text()
    front, body = text.split("\n---\n", 1)
    meta = yaml.safe_load(front.removeprefix("---\n"))
    meta.update(title=title, description=description, tags=[tag])
    new_front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False)
    if raw:  # unquoted, as a hurried edit would be
        new_front = new_front.replace(yaml.safe_dump({"title": title}, allow_unicode=True), f"title: {title}\n")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        content = make_content(root, {"articles/dgx-spark-70b-qlora-cost.md": f"---\n{new_front}---\n{body}"})
        out = published_site(root)
        before = read_tree(out)
        result = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES))
        check_outcome(result, out, before)


SCALARS = [
    "0", "-0", "+0", "7", "-12", "012", "0o17", "0x1f", "0b101", "1_000", "+5", "1:30", "-1:30",
    "1.5", "-1.5", "1.", "-0.0", "0.0", "1.5e+3", "1.5E-3", "1_0.5", ".5", "+1.5", ".inf", "-.inf", ".nan",
    "190:20:30.15", "1e3", "true", "null", "~", "2026-11-01", "'1.5'", '"7"', "1.20", "00.5", "-007",
]  # fmt: skip


def _same(a, b) -> bool:
    return type(a) is type(b) and (a == b or (a != a and b != b)) and repr(a) == repr(b)


@given(
    st.one_of(
        st.sampled_from(SCALARS),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.integers(-(10**20), 10**20).map(str),
        st.from_regex(r"\A[-+]?[0-9_]{1,6}(\.[0-9_]{0,4})?([eE][-+][0-9]{1,2})?\Z"),
    )
)
def test_scalars_parse_as_pyyaml_safe_load_does(text):
    """The loader's shortcuts (remembered tags, plain ints and floats) give PyYAML's own values."""
    from generator.schema import parse_yaml

    doc = parse_yaml(f"v: {text}\n", "x.yaml")
    assert not doc.problems
    assert _same(doc.data["v"], yaml.safe_load(f"v: {text}\n")["v"]), text


@given(
    st.one_of(
        st.text(alphabet=st.sampled_from("ab1$,.%× \t\n\u00a0\u2028\x1c*_[]<>|~&#`\\"), max_size=12),
        st.text(max_size=12),
    )
)
def test_markdown_escape_shortcut_matches_the_full_escape(text):
    """Text with nothing to escape is returned as it is; everything else is escaped the full way."""
    import re

    from generator.escape import md_escape

    expected = re.sub(r"([\\`*_\[\]<>|~&#])", r"\\\1", " ".join(text.split()))
    assert md_escape(text) == expected


def _deepest(text: str) -> tuple[int, bool]:
    """The deepest nesting the parser's events reach in `text` (up to its first error), and whether it holds
    an alias: what the scan in schema.parse_yaml looks for, counted here from PyYAML's own events."""
    loader = yaml.SafeLoader(text)
    depth = deepest = 0
    alias = False
    try:
        while (event := loader.get_event()) is not None:
            alias = alias or isinstance(event, yaml.AliasEvent)
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                deepest = max(deepest, depth)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        pass
    return deepest, alias


def test_texts_that_skip_the_nesting_scan():
    """Flat one-line flow collections skip the scan; a bracket the shortcut cannot account for does not."""
    from generator.schema import _may_nest

    snapshot = "offers:\n  - {gpu: h100, count: 2, usd_per_hour: 5.00}\n  - {gpu: b200, count: 1, usd_per_hour: 5}\n"
    assert not _may_nest(snapshot)
    assert not _may_nest("tags: [a, b]\nname: x\n")
    for text in [
        'a: [ "]", [ "]", [ "]", [x]]]]\n',  # closers in quotes hide the nesting from a count
        "a: [\n  [b]]\n",  # a collection over two lines
        "{a: [b]}\n",  # one inside another
        "a: &x [1]\nb: *x\n",  # an alias
        "a: [b] # ]\n",  # a bracket in a comment
        "- " * 12 + "x\n",  # compact nesting
        " " * 24 + "x\n",
    ]:
        assert _may_nest(text), text


_YAMLISH = st.text(alphabet=st.sampled_from("[]{}\"'#*&!|>-?:, \nab"), max_size=60)


@given(
    st.one_of(
        _YAMLISH, st.tuples(st.sampled_from("[{"), st.integers(20, 40), _YAMLISH).map(lambda t: t[0] * t[1] + t[2])
    )
)
def test_a_text_that_skips_the_scan_nests_no_deeper_than_its_lines_show(text):
    """Whatever `_may_nest` lets through holds no alias and nests about as deep as its lines' indentation
    and indicators (under 24 characters, then at most one flat flow collection)."""
    from generator.schema import _may_nest

    if not _may_nest(text):
        deepest, alias = _deepest(text)
        assert not alias and deepest <= 26, (text, deepest)
