from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator import formatting as f


@pytest.mark.parametrize(
    ("value", "expected"),
    [(274.19999999999993, "$274.20"), (45.1535, "$45.15"), (1234.5, "$1,234.50"), (-2, "-$2.00"), (0.1, "$0.10")],
)
def test_usd(value, expected):
    assert f.usd(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    # below ten cents, two significant figures: 0.0153 is 1.53 hundredths, so 0.015
    [(0.0153, "$0.015"), (0.0062, "$0.0062"), (0.005, "$0.0050"), (0.0949, "$0.095"), (0.0996, "$0.10")],
)
def test_small_amounts_keep_two_significant_figures(value, expected):
    assert f.usd(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    # a tenth of an hour or more: one decimal; below: two significant figures, where "0.0" hours sat beside a cost
    [
        (36.63, "36.6"),
        (0.1, "0.1"),
        (0.0996, "0.1"),
        (0.046, "0.046"),
        (0.06, "0.060"),
        (0.00041, "0.00041"),
        (0, "0.0"),
    ],
)
def test_short_runs_keep_two_significant_figures_of_hours(value, expected):
    assert f.hours(value) == expected


def test_explicit_places_stay_cents():
    assert f.usd(0.0153, 2) == "$0.02"
    assert f.usd(0.005, 2) == "$0.01"


def test_half_up_rounding_not_bankers():
    assert f.number(2.5) == "3"
    assert f.hours(0.25) == "0.3"


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (10_000_000, "10 M"),
        (1_000_000_000, "1 B"),
        (1_500_000_000, "1.5 B"),
        (1_250_000_000, "1.25 B"),  # two decimals at most, as a budget of 1.25 B tokens is written
        (12_345_678, "12.35 M"),
        (20_000, "20 k"),
        (999, "999"),
    ],
)
def test_tokens(n, text):
    assert f.tokens(n) == text


def test_words():
    assert f.fraction_words(1.09 / 5.5) == "a fifth"
    assert f.fraction_words(2 / 6) == "a third"
    assert f.factor_words(0.30 / 0.15) == "doubles"
    assert f.factor_words(2.5) == "grows 2.5×"
    assert f.about_usd(19.16) == "$20"
    assert f.billions(70_553_706_496) == "70.55 B"


def test_amounts_beyond_28_digits_are_written_out():
    """Decimal's default 28 digits made a dollar figure of 10^26 or more fail to round (InvalidOperation):
    `costpress changes` on a figures.json holding one stopped with a traceback. Every finite float prints."""
    assert f.usd(1e26) == "$" + ",".join(["100"] + ["000"] * 8) + ".00"
    assert f.usd(-1.5e27) == "-$1," + ",".join(["500"] + ["000"] * 8) + ".00"
    biggest = f.usd(1.7976931348623157e308)
    assert biggest.startswith("$179,769,313,486,231,570,") and biggest.endswith(",000.00")
    assert len(biggest.replace(",", "")) == 1 + 309 + 3  # "$", the 309 digits, ".00"


def test_non_finite_is_refused():
    with pytest.raises(ValueError):
        f.usd(float("nan"))


def test_string_rounding_matches_decimal_half_up():
    """number() and usd() round on the repr's digits without Decimal; Decimal's ROUND_HALF_UP is the oracle."""
    import random
    import struct
    from decimal import ROUND_HALF_UP, Decimal

    rnd = random.Random(11)
    values = [0.0, -0.0, 0.005, -0.005, 2.675, 0.125, 9.995, -9.995, 999999.995, 0.4999, 1e15, 123456789012345.6, 7, -3]
    for _ in range(20_000):
        values += [
            rnd.uniform(-1e6, 1e6),
            rnd.randint(-(10**7), 10**7) * 0.005,  # many exact ties at two places
            struct.unpack("d", struct.pack("Q", rnd.getrandbits(64)))[0],  # any double, exponent forms included
        ]
    for value in values:
        if not abs(value) < 1e20:  # non-finite, or beyond Decimal's 28 digits: both paths refuse those
            continue
        for places in range(4):
            d = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
            assert f.number(value, places) == f"{d:,.{places}f}", (value, places)
            assert f.usd(value, places) == f"{'-' if d < 0 else ''}${abs(d):,.{places}f}", (value, places)


@pytest.mark.parametrize(
    "name, article",
    [
        ("H100 SXM", "an"),
        ("L40S", "an"),
        ("A100 80 GB", "an"),
        ("RTX 4090", "an"),
        ("B200", "a"),
        ("GB10", "a"),
        ("DGX Spark", "a"),
        ("instance", "an"),
        ("catalog", "a"),
    ],
)
def test_a_an(name, article):
    assert f.a_an(name) == article


def test_count():
    assert [f.count(n, "day") for n in (0, 1, 2, 1500)] == ["0 days", "1 day", "2 days", "1,500 days"]


@pytest.mark.parametrize(
    "text, kept",
    [
        ("8 × A100 80 GB at Lambda", "8\u00a0×\u00a0A100\u00a080\u00a0GB at Lambda"),
        ("needs 157 GB per GPU", "needs 157\u00a0GB per GPU"),
        ("20 M tokens and 1.5 B more", "20\u00a0M tokens and 1.5\u00a0B more"),
        ("312 TFLOPS, 36 PFLOPS", "312\u00a0TFLOPS, 36\u00a0PFLOPS"),
        ("2.4× as much", "2.4× as much"),  # a factor, not a setup
        ("Llama 3.1 8B on 2 GPUs", "Llama 3.1 8B on 2 GPUs"),  # "2 GPUs" is a count, not a unit
        ("1 Mb", "1 Mb"),
        ("full fine-tune, 8-bit Adam", "full fine-tune, 8\u2011bit Adam"),  # a non-breaking hyphen
        ("see https://x.org/8-bit-adam or llama-8-bit now", "see https://x.org/8-bit-adam or llama-8-bit now"),
        ("prices of 2026-11-30.", "prices of 2026\u201111\u201130."),
        ("checked 2027-01-05 and 2026-09-30", "checked 2027\u201101\u201105 and 2026\u201109\u201130"),  # months 01-09
        ("see prices/2026-11-30.yaml or 12026-11-30", "see prices/2026-11-30.yaml or 12026-11-30"),
    ],
)
def test_keep_units(text, kept):
    assert f.keep_units(text) == kept


def test_setups_are_plain_in_data():
    assert f.setup(8, "H100 SXM") == "8 × H100 SXM" and f.tokens(2e7) == "20 M"
    assert f.cell("8 × H100 SXM", "text") == "8\u00a0×\u00a0H100\u00a0SXM"  # pages keep it on one line


# Pieces that meet every keep_units rule and the edges around them: numbers, units, GPU names, "-bit", dates,
# and the characters the rules look at before and after a match (line breaks, slashes, dots, hyphens).
_PIECES = [" ", " ", " ", "\n", "\n\n", "-", "/", ".", "8", "16", "2026", "11", "30", "05", "0", "1",
           "M", "B", "GB", "TFLOPS", "×", "\u00a0", "\u2011", "-bit", "-11-30", "-05-", "bit", "A", "H", "GH",
           "100", "4090", "SXM", "PCIe", "NVL", "x", "a word", "H100", "A16", "prices/", "https://x.org/"]  # fmt: skip


def _rules_everywhere(text: str) -> str:
    """keep_units' rules applied to the whole text in their order, with no check first."""
    text = f._BITS.sub(f.NBHY + "bit", text)
    text = f._DATE_2.sub(f.NBHY, f._DATE_1.sub(f.NBHY, text))
    text = f._TIMES_NAME.sub(f.NBSP, f._UNIT_AFTER.sub(f.NBSP, text))
    return f._GPU_NAME.sub(f.NBSP, text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=240))
def test_keep_units_line_by_line_is_the_rules_on_the_whole_text(pieces):
    """A long text is done line by line, each line remembered; the checks before each rule only skip work.
    Both must give what the rules give on the whole text at once."""
    text = "".join(pieces)
    assert f._keep_units(text) == _rules_everywhere(text)
    assert f.keep_units(text) == (text if " " not in text else _rules_everywhere(text))


def test_keep_units_does_a_long_text_line_by_line():
    line = "A 20 M-token run on 8 × H100 SXM, 8-bit Adam, prices of 2026-11-30, an A16 64 GB card."
    text = "\n".join([line] * 8)
    assert len(text) >= f.LINE_REMEMBERED and len(line) < f.LINE_REMEMBERED
    kept = f.keep_units(line)
    assert kept == (
        "A 20\u00a0M-token run on 8\u00a0×\u00a0H100\u00a0SXM, 8\u2011bit Adam, prices of 2026\u201111\u201130, "
        "an A16\u00a064\u00a0GB card."
    )
    assert f.keep_units(text) == "\n".join([kept] * 8)


@pytest.mark.parametrize(
    ("share", "text"),
    [
        (0.13, "+13%"),
        (-0.4, "\u221240%"),  # a true minus sign, as the memory page's "Model vs published" column prints it
        (0.0076, "+1%"),
        (0.004, "0%"),  # a difference that rounds to nothing has no sign
        (-0.004, "0%"),
        (0.0, "0%"),
    ],
)
def test_signed_pct(share, text):
    assert f.signed_pct(share) == text
