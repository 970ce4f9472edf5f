"""The two Jinja environments pages render with, and what they change in Jinja to make a page cheap.

`PageEnvironment` renders the theme's templates (HTML autoescaped, Markdown
not); `ProseEnvironment` renders an article's own prose, inside Jinja's
immutable sandbox with generator.sandbox's limits. Both keep Jinja's
semantics: the changes are to the code Jinja generates (output escaped as a
plain string, a block's output collected and joined once) and to how
globals, templates, attributes and calls are looked up. tests/test_hostile.py
compares their output with plain Jinja's.
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import os
import re
import stat
from datetime import date
from typing import Any

import jinja2
import jinja2.runtime
import jinja2.utils
from jinja2.compiler import CodeGenerator, optimizeconst
from markupsafe import Markup

from generator import sandbox


class _FlatGlobals:
    """Each template copies the environment's globals once, into a plain dict.

    Jinja gives every template a ChainMap over the environment's globals, and
    flattens it again on every render (5 µs each, eleven renders a family
    page). Jinja's documentation already asks that globals not change once
    templates are loaded, and ours are all set before the first one is.
    """

    globals: dict

    def make_globals(self, d):
        return {**self.globals, **(d or {})}


class _KeptTemplates:
    """get_template answers from a plain dict once a template is loaded (templates never reload in a build).

    Jinja's own cache is an LRU behind a lock and a loader weakref, and every
    `{% extends %}` asks again: about 3 µs a lookup, eight a family page.
    """

    def get_template(self, name, parent=None, globals=None):
        if globals is not None or self.auto_reload:
            return super().get_template(name, parent, globals)
        kept = self.__dict__.setdefault("_kept", {})
        template = kept.get((name, parent))
        if template is None:
            template = kept[(name, parent)] = super().get_template(name, parent)
        return template


def output_escape(value: Any) -> str:
    """What markupsafe.escape makes of a value, as a plain str rather than a new Markup object.

    Autoescaped templates call this for every `{{ ... }}` they write (about a
    hundred a family page); the text only goes into the page, so building a
    Markup for each (a Python-level __new__) was wasted work.
    """
    if type(value) is not str:
        if type(value) is Markup:  # formatted numbers: already safe
            return value
        html = getattr(value, "__html__", None)
        if html is not None:
            return html()
        value = str(value)
    return _escape_text(value)


@functools.lru_cache(maxsize=16_384)  # titles, descriptions and labels come back on every page of a family
def _escape_text(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("'", "&#39;").replace('"', "&#34;")


class _Compiler(CodeGenerator):
    """Jinja's code generator with three changes to the code it writes, not to the text templates make.

    `{{ ... }}` in autoescaped templates compiles to
    `environment.output_escape(...)` (a plain str straight to its escaping,
    `environment.escape_text`): only what a template writes out goes
    through it; blocks, macros and `{% set %}` captures still become Markup as
    before, and where Jinja cannot know at compile time whether escaping is on,
    its own code is kept. Bodies and blocks collect their output (see
    `blockvisit`). And `x.y` answers its common cases in place (see
    `visit_Getattr`).
    """

    @staticmethod
    def _escaped(frame) -> bool:
        """Whether `{{ ... }}` here is escaped, known as it compiles (else Jinja's own code asks as it runs)."""
        return frame.eval_ctx.autoescape and not frame.eval_ctx.volatile

    def _output_child_pre(self, node, frame, finalize) -> None:
        if self._escaped(frame):
            if finalize.src is None:  # a plain str (nine in ten) is escaped without the call to output_escape
                self.write("(environment.escape_text(_cp_v) if type(_cp_v := ")
                return
            self.write("environment.output_escape(")
            self.write(finalize.src)
        else:
            super()._output_child_pre(node, frame, finalize)

    def _output_child_post(self, node, frame, finalize) -> None:
        if self._escaped(frame) and finalize.src is None:  # closes what _output_child_pre opened
            self.write(") is str else environment.output_escape(_cp_v))")
        else:
            super()._output_child_post(node, frame, finalize)

    @optimizeconst
    def visit_Getattr(self, node, frame) -> None:
        """`x.y` answered in place where environment.getattr would give the same answer, without its call.

        Both environments' getattr read a plain dict's item first (see
        PageEnvironment.getattr): that is asked here. Outside the sandbox an
        attribute comes next, read with the built-in getattr; only what has
        neither (an item of another mapping, or nothing) goes on to
        environment.getattr, which asks again in its own order. In the default
        site 178,000 lookups are dict items and 420,000 attributes of records
        (columns, inputs, tables, the article). The object is evaluated once,
        into a name of the function being compiled.
        """
        if self.environment.is_async:
            super().visit_Getattr(node, frame)
            return
        key = repr(node.attr)
        self.write(f"(_cp_o[{key}] if type(_cp_o := ")
        self.visit(node.node, frame)
        self.write(f") is dict and {key} in _cp_o else ")
        if not self.environment.sandboxed:  # the sandbox checks every attribute: only its getattr may read one
            self.write(f"_cp_a if (_cp_a := getattr(_cp_o, {key}, missing)) is not missing else ")
        self.write(f"environment.getattr(_cp_o, {key}))")

    def blockvisit(self, nodes, frame) -> None:
        """A template's body and each of its blocks collect their output in a list and yield it once, joined.

        Jinja yields every piece of output as it goes, and a block's pieces
        pass up through each template that extends it (a page's main block:
        block → base.html → article.html → join, about 300 pieces a page,
        17,000 rows of a listing). Collecting is what Jinja already does for
        macros and `{% set %}` blocks; the text and its order are unchanged.
        """
        if frame.buffer is None and (frame.rootlevel or frame.block_frame) and not frame.soft_frame:
            self.buffer(frame)
            try:
                super().blockvisit(nodes, frame)
                self.writeline(f"yield concat({frame.buffer})")
            finally:
                frame.buffer = None
            return
        super().blockvisit(nodes, frame)


_BUILTIN_METHOD = type(date.today().isoformat)
_FUNCTION = type(lambda: None)


class _Context(jinja2.runtime.Context):
    @jinja2.utils.internalcode
    def call(__self, __obj, *args, **kwargs):  # noqa: N805 (Jinja's own signature)
        """`{{ day.isoformat() }}` and `{{ table("x") }}` call the function straight away.

        Jinja first asks every callable (and its __call__) whether it wants
        the context passed in, two failed attribute lookups each; a built-in
        method cannot carry that mark, and a plain function carries it in its
        own __dict__ (its __call__ never does), so the answer is known.
        """
        kind = type(__obj)
        if kind is not _BUILTIN_METHOD and (kind is not _FUNCTION or "jinja_pass_arg" in __obj.__dict__):
            return jinja2.runtime.Context.call(__self, __obj, *args, **kwargs)
        kwargs.pop("_block_vars", None)
        kwargs.pop("_loop_vars", None)
        try:
            return __obj(*args, **kwargs)
        except StopIteration:
            return __self.environment.undefined(
                "value was undefined because a callable raised a StopIteration exception"
            )


class PageEnvironment(_KeptTemplates, _FlatGlobals, jinja2.Environment):
    code_generator_class = _Compiler
    context_class = _Context
    output_escape = staticmethod(output_escape)
    escape_text = staticmethod(_escape_text)

    def getattr(self, obj, attribute):
        """`x.y` on a plain dict reads its item first; otherwise Jinja's order, written inline.

        Jinja tries the attribute first and the item after a raised
        AttributeError; page values are mostly dicts, so that was an exception
        for every `page.url` or `offer.setup` (about a hundred a family page),
        and tables ask each column for its key, format and alignment on every
        row (about 300 lookups a page, where a second call per lookup showed).
        A dict whose key shadows a dict method (`items`, `keys`) gives the item,
        which is what a template writer means by it.
        """
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        try:
            return getattr(obj, attribute)
        except AttributeError:
            pass
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return self.undefined(obj=obj, name=attribute)


class _ProseCompiler(sandbox.BoundedConcat, _Compiler):
    """Collected output (prose is not autoescaped: no other change), and `~` with a size limit."""


class ProseEnvironment(_FlatGlobals, sandbox.BoundedSandbox):
    """Prose: Jinja's immutable sandbox with the limits of generator.sandbox."""

    context_class = _Context  # the sandbox checks a callable before the context calls it
    code_generator_class = _ProseCompiler

    def is_safe_callable(self, obj) -> bool:
        """The sandbox's rule (no `unsafe_callable` or `alters_data` mark), answered without failed lookups.

        A built-in method cannot carry either mark; a plain function keeps
        them in its own __dict__. Anything else is asked the sandbox's way.
        """
        kind = type(obj)
        if kind is _BUILTIN_METHOD:
            return True
        if kind is _FUNCTION:
            marks = obj.__dict__
            return not (marks.get("unsafe_callable", False) or marks.get("alters_data", False))
        return sandbox.BoundedSandbox.is_safe_callable(self, obj)

    def getattr(self, obj, attribute):
        """The same dict-first rule (an item is always allowed); the rest goes through the sandbox's checks."""
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return sandbox.BoundedSandbox.getattr(self, obj, attribute)


class CodeCache(jinja2.BytecodeCache):
    """The theme's templates as compiled code, kept between builds in the user's cache folder.

    Compiling the theme took each worker process 0.02-0.1 s of every build
    (0.1 s of CPU in a 10,000-page price refresh, 0.28 s in a cold build of
    the default site). Files are named by `prefix` (costpress's code digest,
    which covers the templates, costpress's source, Jinja's and Python's
    versions, and the environment's label) and Jinja's key for the template
    name; each holds the template source's checksum, so a changed template
    is compiled again. The folder must belong to the user and be writable by
    no one else (compiled code is run as it is, as Python's own .pyc files
    are), or it is not used. Anything that goes wrong (a missing or damaged
    file, a folder that cannot be written) only means compiling as before.
    """

    HEAD = b"costpress compiled template 1\n"
    NAME = re.compile(r"([0-9a-f]{16})-[a-z]+-[0-9a-f]{40}\.cache(?:\.\d+\.tmp)?\Z")

    def __init__(self, folder: str, prefix: str):
        self.folder, self.prefix = folder, prefix

    def _path(self, bucket: jinja2.bccache.Bucket) -> str:
        return os.path.join(self.folder, f"{self.prefix}-{bucket.key}.cache")

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            with open(self._path(bucket), "rb") as fh:
                data = fh.read()
        except OSError:
            return
        head, _, rest = data.partition(b"\n")
        checksum, _, code = rest.partition(b"\n")
        if head + b"\n" != self.HEAD or checksum != bucket.checksum.encode("ascii"):
            return
        try:
            bucket.code = marshal.loads(code)
        except (EOFError, ValueError, TypeError):
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        path = self._path(bucket)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(self.HEAD + bucket.checksum.encode("ascii") + b"\n" + marshal.dumps(bucket.code))
            os.replace(tmp, path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def code_cache_folder() -> str | None:
    """`$XDG_CACHE_HOME/costpress/templates` (or `~/.cache/...`), made if missing, when it is the user's own
    and no one else can write to it; else None (no cache)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "costpress", "templates")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return None
    uid = getattr(os, "getuid", None)  # (not on Windows: no owner to check, no cache)
    if uid is None or not stat.S_ISDIR(st.st_mode) or st.st_uid != uid() or st.st_mode & 0o022:
        return None
    return folder


def prune_code_cache(folder: str, keep: str) -> None:
    """Remove the compiled templates of other versions (files of this cache's own naming only)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        found = CodeCache.NAME.match(name)
        if found is not None and found.group(1) != keep:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name))
