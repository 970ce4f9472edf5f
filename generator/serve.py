"""`costpress serve`: build, serve site/ on localhost, rebuild on edits, reload the browser.

The reload script is added to HTML responses only as they are served; the
files in site/ stay exactly what a build writes.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import threading
import traceback
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from generator import formatting as fmt
from generator import guard, write
from generator.build import render_site
from generator.errors import CostpressError
from generator.publish import publish, strays_said

RELOAD_JS = b"""<script>
(function () {
  var seen = null, box = null;
  function show(error) {
    if (!error) { if (box) { box.remove(); box = null; } return; }
    if (!box) {
      box = document.createElement('div');
      box.setAttribute('role', 'alert');
      box.style.cssText = 'position:fixed;inset:auto 0 0 0;max-height:60vh;overflow:auto;z-index:99999;' +
        'margin:0;padding:1em 1.25em;background:#2b0b0b;color:#ffe9e9;font:14px/1.45 monospace;white-space:pre-wrap;' +
        'border-top:4px solid #e5484d';
      document.body.appendChild(box);
    }
    box.textContent = 'costpress: the last build failed; this is the last good site.\n\n' + error;
  }
  function poll() {
    fetch('/__costpress/version', {cache: 'no-store'}).then(function (r) { return r.json(); }).then(function (v) {
      if (seen !== null && v.version !== seen) { location.reload(); return; }
      seen = v.version;
      show(v.error);
    }).catch(function () {}).finally(function () { setTimeout(poll, 700); });
  }
  poll();
})();
</script>
"""


class State:
    """The build counter the browser polls, and the last build error."""

    def __init__(self) -> None:
        self.version = 0
        self.error: str | None = None
        self.lock = threading.Lock()


def rebuild(
    content: Path, out: Path, templates: Path, state: State, log: Callable[[str], None], drafts: bool = True
) -> None:
    """Build once; on any failure keep serving the last good site and report why, here and in the browser.

    Whatever goes wrong, the watcher that calls this keeps running: the next
    change tries again.
    """
    try:
        dest = guard.target(out)
        guard.refuse_place(dest, str(out), [("content", content), ("templates", templates)])
        with guard.build_lock(dest, str(out), wait=True, say=log):
            diff = publish(render_site(content, templates, drafts=drafts).files, dest, str(out))
    except CostpressError as exc:
        _failed(state, str(exc), log)
        return
    except Exception:  # a bug: say so, and keep watching
        _failed(state, "costpress failed unexpectedly (a bug; please report it):\n" + traceback.format_exc(), log)
        return
    with state.lock:
        state.error = None
        state.version += 1
    log(f"rebuilt: {fmt.count(len(diff.changed) + len(diff.added), 'file', False)} written, {diff.unchanged} unchanged")
    for line in strays_said(diff, str(out)):
        log(f"warning: {line}")


def _failed(state: State, message: str, log: Callable[[str], None]) -> None:
    with state.lock:
        state.error = message
    log(f"build failed, still serving the last good site:\n{message}")


def make_handler(out: Path, state: State):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet server
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            try:
                self._get()
            except (ValueError, OSError):  # a malformed path (a NUL byte, a name too long): not a page
                with contextlib.suppress(OSError):
                    self.send_error(400, "Bad request")

        def do_HEAD(self) -> None:  # noqa: N802 - http.server API
            try:
                super().do_HEAD()
            except (ValueError, OSError):
                with contextlib.suppress(OSError):
                    self.send_error(400, "Bad request")

        def _get(self) -> None:
            if self.path.startswith("/__costpress/version"):
                with state.lock:
                    body = json.dumps({"version": state.version, "error": state.error}).encode()
                self._send(body, "application/json")
                return
            if "\0" in urllib.parse.unquote(self.path):
                self.send_error(400, "Bad request")
                return
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                address = urllib.parse.urlsplit(self.path)
                if not address.path.endswith("/"):  # as a static host does: relative links need the slash
                    self.send_response(301)
                    self.send_header("Location", urllib.parse.urlunsplit(address._replace(path=address.path + "/")))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path = path / "index.html"
            if path.suffix == ".html" and path.is_file():
                html = path.read_bytes()
                marker = b"</body>"
                html = html.replace(marker, RELOAD_JS + marker, 1) if marker in html else html + RELOAD_JS
                self._send(html, "text/html; charset=utf-8")
                return
            super().do_GET()

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    return functools.partial(Handler, directory=str(out))


def watch(paths: list[Path], on_change: Callable[[], None], stop: threading.Event, ready: threading.Event) -> None:
    """Call on_change after each batch of file changes under paths (watchfiles: inotify, no polling)."""
    from watchfiles import watch as watch_files

    batches = watch_files(
        *[str(p) for p in paths], stop_event=stop, debounce=200, step=50, yield_on_timeout=True, rust_timeout=200
    )
    for changes in batches:
        ready.set()  # the first (empty) batch arrives once the watcher is running
        if changes:
            try:
                on_change()
            except Exception:  # on_change reports its own failures; nothing may stop the watching
                traceback.print_exc()


def start(
    content: Path, out: Path, templates: Path, host: str, port: int, log: Callable[[str], None], drafts: bool = True
):
    """Watch, build, then serve, the watching and serving in background threads; returns (server, state, stop
    event).

    Drafts are built and marked as such unless `drafts` is False.

    A folder no build may replace (its place, or files costpress did not write in it), or a port in use, is
    an error before anything is built: no edit to content could make the build succeed, and the server would
    show that folder as it is.
    """
    dest = guard.target(out)
    guard.refuse_place(dest, str(out), [("content", content), ("templates", templates)])
    guard.check_owned(str(out), *write.scan(dest))
    guard.make_parent(dest, str(out))  # a file where a folder of the path goes: no edit to content helps
    state = State()
    try:
        server = http.server.ThreadingHTTPServer((host, port), make_handler(out, state))
    except OSError as exc:
        raise CostpressError(
            f"cannot serve on {host}:{port}: {exc.strerror or exc}; choose another with --port (0 picks a free one)"
        ) from None
    building = threading.Lock()  # one build at a time: a build's pool and its job data are the process's own

    def build_once() -> None:
        with building:
            rebuild(content, out, templates, state, log, drafts)

    # Watch before the first build, so that an edit made while it runs is built after it (it was missed
    # until the next edit); the watcher's build waits for the first one to end.
    stop, ready = threading.Event(), threading.Event()
    watched = [p for p in (content, templates) if p.is_dir()]  # a site may have no templates of its own
    threading.Thread(target=watch, args=(watched, build_once, stop, ready), daemon=True).start()
    ready.wait(timeout=10)
    build_once()
    out.mkdir(parents=True, exist_ok=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, state, stop
