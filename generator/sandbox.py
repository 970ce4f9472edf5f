"""Limits on article prose: what a writer's Jinja may compute, how long it may take, how much it may make.

Article bodies and FAQ answers are Jinja templates written in content/. They
run in Jinja's immutable sandbox (no attribute is reachable that could
change a value the page shows elsewhere), and on top of that:

- text, lists and numbers may not grow past what a page could use:
  repetition, concatenation (`+` and `~`), `%` formatting, padding methods,
  format widths and powers are checked *before* they run;
- `range` gives at most MAX_RANGE numbers;
- each template gets a time budget (SECONDS) enforced by a watchdog thread,
  so loops over loops stop with an error naming the article;
- the build command caps the process's address space (see `memory_budget`),
  so anything that still grows ends in a MemoryError, not a swapping machine.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import os
import re
import string
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from jinja2.compiler import CodeGenerator
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_TEXT = 1_000_000  # characters (or items) in any one value prose makes
MAX_RANGE = 10_000
MAX_BITS = 4_096  # integers prose makes: far beyond any figure, far below a slow bignum
SECONDS = 5.0  # per prose template of one page


class ProseTimeout(Exception):
    """A prose template ran past its time budget."""


class ProseLimit(SecurityError):
    """Prose asked for a value too large to make."""


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes | list | tuple | dict) else 0


def _check_size(value: Any, what: str) -> Any:
    if _size(value) > MAX_TEXT:
        raise ProseLimit(f"{what} would make a value of over {MAX_TEXT:,} characters or items")
    return value


def _check_int(value: Any) -> None:
    if isinstance(value, int) and value.bit_length() > MAX_BITS:
        raise ProseLimit(f"a number of more than {MAX_BITS} bits; prose works with figures, not huge numbers")


def bounded_range(*args: Any) -> range:
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise ProseLimit(f"range() of {len(rng):,} numbers; at most {MAX_RANGE:,} in prose")
    return rng


# %-format widths and precisions, and '*' (a width taken from the arguments)
PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")


def _check_percent(fmt: str) -> None:
    for m in PERCENT_SPEC.finditer(fmt):
        for part in m.groups():
            if part == "*" or (part is not None and int(part) > MAX_TEXT):
                raise ProseLimit(f"a %-format width of {part}; at most {MAX_TEXT:,}")


def _check_format(fmt: str) -> None:
    """Widths in a str.format pattern: plain digits up to MAX_TEXT, nothing nested."""
    for _text, _field, spec, _conv in string.Formatter().parse(fmt):
        if spec and ("{" in spec or any(int(n) > MAX_TEXT for n in re.findall(r"\d+", spec))):
            raise ProseLimit(f"a format width {spec!r}; at most {MAX_TEXT:,}, given as plain digits")


def _binop_check(op: str, left: Any, right: Any) -> None:
    if op == "*":
        for seq, n in ((left, right), (right, left)):
            if _size(seq) and isinstance(n, int) and not isinstance(n, bool) and _size(seq) * max(n, 0) > MAX_TEXT:
                raise ProseLimit(f"repeating a value {n:,} times would make over {MAX_TEXT:,} characters or items")
        if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_BITS:
            raise ProseLimit(f"a product of more than {MAX_BITS} bits")
    elif op == "**":
        if isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
            if right > MAX_BITS or left.bit_length() * right > MAX_BITS:
                raise ProseLimit(f"a power of more than {MAX_BITS} bits")
    elif op == "+":
        if _size(left) and _size(right) and _size(left) + _size(right) > MAX_TEXT:
            raise ProseLimit(f"joining values into over {MAX_TEXT:,} characters or items")
    elif op == "%" and isinstance(left, str):
        _check_percent(left)


# str methods that make long text from short arguments, and how long
def _padding(args: tuple) -> int:
    return args[0] if args and isinstance(args[0], int) else 0


def _method_check(obj: Any, args: tuple, kwargs: dict) -> None:
    obj = getattr(obj, "__wrapped__", obj)  # the sandbox hands out str.format wrapped
    owner, name = getattr(obj, "__self__", None), getattr(obj, "__name__", "")
    if not isinstance(owner, str):
        return
    if name in ("center", "ljust", "rjust", "zfill") and _padding(args) > MAX_TEXT:
        raise ProseLimit(f"str.{name}({_padding(args):,}); at most {MAX_TEXT:,}")
    if name == "expandtabs":
        size = (args[0] if args else kwargs.get("tabsize", 8)) or 0
        if isinstance(size, int) and size * (owner.count("\t") + 1) + len(owner) > MAX_TEXT:
            raise ProseLimit(f"str.expandtabs({size:,}) would make over {MAX_TEXT:,} characters")
    if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        hits = owner.count(args[0]) if args[0] else len(owner) + 1
        if len(owner) + hits * max(0, len(args[1]) - len(args[0])) > MAX_TEXT:
            raise ProseLimit(f"str.replace would make over {MAX_TEXT:,} characters")
    if name in ("format", "format_map"):
        _check_format(owner)


class BoundedConcat(CodeGenerator):
    """`a ~ b` in prose compiles to environment.bounded_join((a, b)) instead of Jinja's unchecked join."""

    def visit_Concat(self, node, frame) -> None:  # noqa: N802 (Jinja's visitor names)
        self.write("environment.bounded_join((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox with the size limits above on operators, calls, filters and `~`."""

    intercepted_binops = frozenset(["*", "**", "+", "%"])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.globals["range"] = bounded_range

    def call_binop(self, context, operator: str, left: Any, right: Any) -> Any:
        _binop_check(operator, left, right)
        result = self.binop_table[operator](left, right)
        _check_int(result)
        return result

    def call(__self, __context, __obj, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's own signature)
        _method_check(__obj, args, kwargs)
        return _check_size(super().call(__context, __obj, *args, **kwargs), "a call")

    def bounded_join(self, parts: tuple) -> str:
        texts = [str(p) for p in parts]
        if sum(map(len, texts)) > MAX_TEXT:
            raise ProseLimit(f"'~' would make over {MAX_TEXT:,} characters")
        return "".join(texts)

    def bound_filters(self, own: frozenset[str] = frozenset()) -> None:
        """Wrap Jinja's filters: arguments and result checked like a call's (marks such as pass_context kept).

        Filters named in `own` are costpress's number and link filters, whose output is a short formatted
        figure whatever the input; they run unwrapped (a family page calls them about thirty times).
        """
        for name, func in list(self.filters.items()):
            if name not in own:
                self.filters[name] = _bounded_filter(name, func)


def _bounded_filter(name: str, func: Callable) -> Callable:
    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        if name in ("center", "indent") and any(isinstance(a, int) and a > MAX_TEXT for a in args[1:]):
            raise ProseLimit(f"the {name} filter with a width over {MAX_TEXT:,}")
        if name == "format":
            fmt = next((a for a in args if isinstance(a, str) and "%" in a), "")
            _check_percent(fmt)
        return _check_size(func(*args, **kwargs), f"the {name} filter")

    return run


# --- time budget ---------------------------------------------------------------


class _Watchdog:
    """One thread per process that raises ProseTimeout in a thread whose budget ran out.

    Arming and disarming are two assignments under a lock (a page renders its
    prose in well under a millisecond); the thread looks four times a second.
    The exception is delivered between two Python steps of the rendering
    thread, so a loop of any kind stops; a single C call runs to its end,
    which the size limits keep short.
    """

    TICK = 0.25

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.armed: tuple[int, float] | None = None  # (thread id, deadline)
        self.fired = False
        threading.Thread(target=self._run, name="costpress-prose-watchdog", daemon=True).start()

    def _run(self) -> None:
        while True:
            time.sleep(self.TICK)
            with self.lock:
                if self.armed is not None and time.monotonic() > self.armed[1] and not self.fired:
                    _async_raise(self.armed[0], ProseTimeout)
                    self.fired = True


class _Budget:
    """One budget, armed on entry and disarmed on exit (a class, not a generator's context manager: a
    microsecond less each time, and prose renders three times a page). ProseTimeout is raised anew on exit
    when the budget ran out, with the one that stopped the template as its context."""

    __slots__ = ("dog", "seconds")

    def __init__(self, dog: _Watchdog, seconds: float) -> None:
        self.dog, self.seconds = dog, seconds

    def __enter__(self) -> None:
        dog = self.dog
        with dog.lock:
            dog.armed, dog.fired = (threading.get_ident(), time.monotonic() + self.seconds), False

    def __exit__(self, kind, value, tb) -> bool:
        dog = self.dog
        with dog.lock:
            fired, dog.armed, dog.fired = dog.fired, None, False
            if fired:
                _async_raise(threading.get_ident(), None)  # clear it if it has not arrived yet
        if fired:
            raise ProseTimeout
        return False


def _async_raise(thread_id: int, exc: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc else None)


_WATCHDOG: _Watchdog | None = None


def time_budget(seconds: float | None = None) -> _Budget:
    """A context manager: ProseTimeout once `seconds` (SECONDS, read now) pass inside it (one watchdog per process)."""
    global _WATCHDOG
    if _WATCHDOG is None:
        _WATCHDOG = _Watchdog()
    return _Budget(_WATCHDOG, SECONDS if seconds is None else seconds)


def _forget_watchdog() -> None:
    global _WATCHDOG
    _WATCHDOG = None  # its thread stayed in the parent: a forked worker starts its own when it needs one


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_watchdog)


# --- memory budget -----------------------------------------------------------

MEMORY_HEADROOM = 3 << 30  # bytes of address space a build may add to what it has at the start


@contextlib.contextmanager
def memory_budget(headroom: int = MEMORY_HEADROOM) -> Iterator[None]:
    """Cap this process's address space (and its workers', which inherit it) for the duration.

    A value that still grows past the size limits then raises MemoryError
    inside the template that made it, which the renderer reports as that
    article's problem.
    """
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[0])
        cap = pages * os.sysconf("SC_PAGE_SIZE") + headroom
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft != resource.RLIM_INFINITY and soft < cap:
            cap = soft
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, OSError, ValueError):  # not Linux: the size and time limits still hold
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def describe(exc: BaseException) -> str:
    """What went wrong in prose, in one line."""
    if isinstance(exc, ProseTimeout):
        return f"took longer than {SECONDS:g} s to render; a loop over a loop, or a recursive macro?"
    if isinstance(exc, RecursionError):
        return "a macro calls itself too deeply"
    if isinstance(exc, MemoryError):
        return "ran out of its memory budget; something in it grows without end"
    if isinstance(exc, ZeroDivisionError):
        return "divides by zero"
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, OverflowError) or (isinstance(exc, float) and not math.isfinite(exc)):
        return f"a number too large: {text}"
    return text if len(text) < 200 else text[:197] + "..."
