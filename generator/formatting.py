"""Number formatting shared by every page: one place, fixed locale (en, '.' and ',').

Rounding is half-up on the shortest decimal form of the float, so a value
stored as 274.199999... prints as the 274.20 a reader would compute by hand.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import ROUND_HALF_UP, Context, Decimal

FRACTIONS = {
    1: "the same as",
    2: "half",
    3: "a third",
    4: "a quarter",
    5: "a fifth",
    6: "a sixth",
    7: "a seventh",
    8: "an eighth",
    9: "a ninth",
    10: "a tenth",
}
FACTORS = {2: "doubles", 3: "triples", 4: "quadruples"}


def dround(x: float, places: int = 0) -> Decimal:
    """Round half-up at `places` decimals, from the float's shortest repr."""
    if isinstance(x, Decimal):
        d = x
    else:
        x = float(x)
        if not math.isfinite(x):
            raise ValueError(f"cannot format a non-finite number: {x!r}")
        d = Decimal(repr(x))
    return d.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP, context=WIDE)


# Room for every digit of any finite float (1.8e308 has 309) and its decimals: the default context's 28 digits
# made quantize fail (InvalidOperation) on a dollar figure of 10^26 or more, read back from a figures.json.
WIDE = Context(prec=400)


def _fixed(x: float, places: int) -> tuple[str, str] | None:
    """(sign, digits with separators) of dround(x, places), rounded on the repr's digits; None if unsure.

    Half-up on the shortest decimal form only looks at the first digit dropped,
    so plain strings do what Decimal does here, several times faster; Decimals,
    exponent forms and non-finite values take the Decimal path. Results are
    remembered (family pages print the same amounts thousands of times), except
    for zero: 0.0 and -0.0 are equal keys that print differently.
    """
    if type(x) is not float and type(x) is not int:
        return None
    return _digits(x, places) if x == 0 else _remembered_digits(x, places)


def _digits(x: float, places: int) -> tuple[str, str] | None:
    text = repr(float(x))
    if "e" in text or "n" in text:  # 1e+16, inf, nan
        return None
    sign = "-" if text[0] == "-" else ""
    whole, _, frac = text.lstrip("-").partition(".")
    if len(frac) > places:
        up = frac[places] >= "5"
        frac = frac[:places]
        if up:
            n = str(int(whole + frac) + 1).rjust(places + 1, "0")
            whole, frac = (n[:-places], n[-places:]) if places else (n, "")
    else:
        frac = frac.ljust(places, "0")
    return sign, f"{int(whole):,}" + ("." + frac if places else "")


_remembered_digits = functools.lru_cache(maxsize=200_000)(_digits)


def sentence(text):
    """Text that starts a sentence, a list item or a table row: its first letter a capital ('full fine-tune' ->
    'Full fine-tune'); escaped markup stays markup."""
    s = str(text)
    out = s[:1].upper() + s[1:]
    return type(text)(out) if type(text) is not str and isinstance(text, str) else out


def count(n: int, noun: str, grouped: bool = True) -> str:
    """'1 day', '3 days', '1,809 pages': a whole count with its noun, singular for one; `grouped=False` writes
    the digits as they are, for a line scripts read ('built 1809 articles')."""
    return f"{number(n) if grouped else n} {noun}{'' if n == 1 else 's'}"


def series(items: list[str], last: str = "and") -> str:
    """'A', 'A and B', 'A, B and C': names in a sentence."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def a_an(name: str) -> str:
    """The indefinite article a name is read with: 'an H100', 'an L40S', 'an A100', 'a B200', 'a DGX Spark'.

    A letter followed by a digit or a capital is read as its letter name, and
    the letters whose names start with a vowel sound take 'an'.
    """
    if not name:
        return "a"
    initialism = len(name) > 1 and (name[1].isdigit() or name[1].isupper())
    vowels = "AEFHILMNORSX" if initialism else "AEIOUaeiou"
    return "an" if name[0] in vowels else "a"


def number(x: float, places: int = 0) -> str:
    """1234.5 -> '1,234.5' with a fixed number of decimals."""
    fast = _fixed(x, places)
    if fast is not None:
        return fast[0] + fast[1]
    return f"{dround(x, places):,.{places}f}"


def usd_places(x: float) -> int:
    """Decimals an amount is shown with: cents, or two significant figures below ten cents.

    Per-token prices of small models are fractions of a cent per thousand
    tokens; at cents, $0.0153 and $0.0249 would both read "$0.02".
    """
    return small_places(x, 2)


def small_places(x: float, places: int) -> int:
    """`places`, or as many decimals as show two significant figures of a value below 0.1 (not zero)."""
    a = abs(float(x))
    if a == 0 or a >= 0.1 or not math.isfinite(a):
        return places
    return places if sig(a, 2) >= Decimal("0.1") else max(places, 1 - math.floor(math.log10(a)))


def usd(x: float, places: int | None = None) -> str:
    """Dollars: '$27.42', '$1,234.50', '$0.015' (two significant figures below ten cents); places=0 gives '$274'."""
    if places is None:
        places = usd_places(x)
    fast = _fixed(x, places)
    if fast is not None:  # a value that rounds to zero shows no minus sign
        sign, digits = fast
        return f"{sign if digits.strip('0.,') else ''}${digits}"
    d = dround(x, places)
    sign = "-" if d < 0 else ""
    return f"{sign}${abs(d):,.{places}f}"


def hours(x: float, places: int = 1) -> str:
    """'36.6'; two significant figures below a tenth ('0.034'): a short run on a large setup read '0.0' hours."""
    return number(x, small_places(x, places))


def ratio(x: float, places: int = 1) -> str:
    """'7.2×'."""
    return f"{number(x, places)}×"


def pct(x: float, places: int = 0) -> str:
    """A share as a percentage: 0.3 -> '30%'."""
    return f"{number(float(x) * 100, places)}%"


def _trim(d: Decimal) -> str:
    text = f"{d:,f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


NBSP = "\u00a0"
NBHY = "\u2011"
# Where a line must not break. Each pattern starts with its literal character (" ", "-") and checks
# what comes before it with fixed-width look-behinds, so the regex engine jumps from one space or
# hyphen to the next: five times faster on a page's prose than patterns that start with a look-behind.
#
# a number and the unit after it, and a count and the "×" of a setup: "20 M", "152 GB", "8 × H100"
_UNIT_AFTER = re.compile(r" (?<=\d )(?=(?:M|B|T|k|K|GB|GiB|TB|TFLOPS|PFLOPS?|×)(?![\w]))")
_TIMES_NAME = re.compile(r" (?<=\d\u00a0× )(?=\w)")
# a GPU model and what follows it in its name ("A100 80 GB", "H100 SXM", "H100 PCIe"): one to three
# capitals and two to four digits, as a word
_GPU_NAME = re.compile(
    " (?=\\d|SXM|PCIe|NVL)(?:" + "|".join(rf"(?<=\b[A-Z]{{{a}}}\d{{{d}}} )" for a in (1, 2, 3) for d in (2, 3, 4)) + ")"
)
# "8-bit", "16-bit": not inside an address or a slug (no word character, "/", "." or "-" before the number)
_BITS = re.compile(r"(?:(?<=[^\w/.-]\d)|(?<=^\d)|(?<=[^\w/.-]\d\d)|(?<=^\d\d))-bit\b")
# a date in a sentence ("2026-11-30"), not in an address, a path or a longer number: its first hyphen,
# then its second (after the first was made non-breaking)
_DATE_1 = re.compile(r"-(?=[01]\d-[0-3]\d(?![\w/-]))(?:(?<=[^\w/.-]\d{4}-)|(?<=^\d{4}-))")
_DATE_2 = re.compile(r"-(?=[0-3]\d(?![\w/-]))(?:(?<=[^\w/.-]\d{4}\u2011[01]\d-)|(?<=^\d{4}\u2011[01]\d-))")


def keep_units(text: str) -> str:
    """Text with a non-breaking space between each number and its unit ('152 GB', '20 M', '8 × H100'),
    and non-breaking hyphens in '8-bit' and in dates ('2026-11-30'). A text without a space is left as it is.

    Every rule looks only within a line, so a long text (an article's body) is done line by line,
    each line remembered: a family's pages share most of their lines (about 6,500 distinct lines
    among 10,000 pages' 570,000), and its body took four times as long done whole.
    """
    if " " not in text:
        return text
    if len(text) < LINE_REMEMBERED:
        return _kept_units(text)  # labels repeat: remember them
    return "\n".join(
        [_kept_units(line) if len(line) < LINE_REMEMBERED else _keep_units(line) for line in text.split("\n")]
    )


LINE_REMEMBERED = 300  # texts (and lines of longer ones) shorter than this are remembered


def _keep_units(text: str) -> str:
    """keep_units' rules on the whole of `text`. Each check before a rule is one that every match of the
    rule needs, so that a line gives the same result alone as within any text."""
    if "-bit" in text:
        text = _BITS.sub(NBHY + "bit", text)
    if "-1" in text or "-0" in text:
        text = _DATE_1.sub(NBHY, text)
    if NBHY in text and "-" in text:  # a date's second hyphen, once its first is non-breaking
        text = _DATE_2.sub(NBHY, text)
    text = _TIMES_NAME.sub(NBSP, _UNIT_AFTER.sub(NBSP, text))
    return _GPU_NAME.sub(NBSP, text)


_kept_units = functools.lru_cache(maxsize=16_384)(_keep_units)


def setup(count: int, gpu_name: str) -> str:
    """'8 × H100 SXM': plain spaces in data (ids, CSV, figures.json); pages keep it together (keep_units)."""
    return f"{count} × {gpu_name}"


def tokens(n: float) -> str:
    """Token counts in words a reader scans: '10 M', '1.5 B', '500 k'."""
    n = float(n)
    return _tokens(n) if n == 0 else _remembered_tokens(n)  # 0.0 and -0.0: equal keys, different text


def _tokens(n: float) -> str:
    for size, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= size:
            return f"{_trim(dround(n / size, 2))} {unit}"
    return number(n, 0)


_remembered_tokens = functools.lru_cache(maxsize=4096)(_tokens)  # a family repeats its token counts


def billions(n: float, places: int = 2) -> str:
    """70553706496 -> '70.55 B'."""
    return f"{number(float(n) / 1e9, places)} B"


def sig(x: float, digits: int) -> Decimal:
    """Round to significant digits, half-up."""
    x = float(x)
    if x == 0:
        return Decimal(0)
    exponent = math.floor(math.log10(abs(x)))
    return dround(x, digits - 1 - exponent) if digits - 1 - exponent > 0 else _round_int(x, exponent, digits)


def _round_int(x: float, exponent: int, digits: int) -> Decimal:
    step = Decimal(10) ** (exponent - digits + 1)
    return (Decimal(repr(x)) / step).quantize(Decimal(1), rounding=ROUND_HALF_UP) * step


def about_usd(x: float) -> str:
    """A rough dollar figure for prose: one significant digit under $100, two above."""
    d = sig(x, 1 if abs(float(x)) < 100 else 2)
    return usd(d, 0) if d == d.to_integral_value() else usd(d, 2)


def fraction_words(x: float) -> str:
    """0.198 -> 'a fifth': the nearest unit fraction, in words."""
    n = round(1 / float(x))
    return FRACTIONS.get(n, f"1/{n}")


def factor_words(x: float) -> str:
    """2.0 -> 'doubles'; other factors as 'grows 2.5×'."""
    r = float(x)
    if abs(r - round(r)) < 1e-9 and round(r) in FACTORS:
        return FACTORS[round(r)]
    return f"grows {ratio(r)}"


def integer(x: float) -> str:
    return number(x, 0)


def signed_pct(x: float, places: int = 0) -> str:
    """A difference as a signed percentage: 0.13 -> '+13%', -0.4 -> '−40%' (a true minus sign)."""
    text = pct(abs(x), places)
    if text.strip("0.%") == "":
        return text
    return ("+" if x > 0 else "\u2212") + text


FILTERS = {
    "usd": usd,
    "signed_pct": signed_pct,
    "usd0": lambda x: usd(x, 0),
    "about_usd": about_usd,
    "hours": hours,
    "ratio": ratio,
    "pct": pct,
    "tokens": tokens,
    "billions": billions,
    "num": number,
    "int": integer,
    "fraction_words": fraction_words,
    "factor_words": factor_words,
}


def cell(value, kind: str = "text") -> str:
    """Format one table cell by its column's format name ('usd', 'num2', 'text', ...); text starts with a capital.

    Results are remembered per value, its type and the format: family pages
    repeat the same budgets and prices thousands of times. Zero (0.0 and -0.0
    are equal keys that may print differently) and unhashable values are
    formatted every time.
    """
    if value == 0:
        return _cell(value, kind)
    try:
        return _remembered_cell(value, kind)
    except TypeError:  # unhashable
        return _cell(value, kind)


def data_cell(value, kind: str = "text") -> str:
    """A cell as data has it (CSV files, figure ids): text as written, not starting with a capital."""
    return keep_units(str(value)) if kind == "text" else cell(value, kind)


def _cell(value, kind: str) -> str:
    if value is None:
        return ""
    if kind == "text":  # a cell reads as a phrase of its own: it starts with a capital
        return sentence(keep_units(str(value)))
    if kind.startswith("num"):
        return number(value, int(kind[3:] or 0))
    return keep_units(FILTERS[kind](value))


_remembered_cell = functools.lru_cache(maxsize=200_000, typed=True)(_cell)
