"""`costpress serve`: build, serve site/ on localhost, rebuild on edits, reload the browser.

The reload script is added to HTML responses only as they are served; the
files in site/ stay exactly what a build writes.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Callable
from pathlib import Path

from generator.build import render_site
from generator.errors import CostpressError
from generator.write import clean_leftovers, publish

RELOAD_JS = b"""<script>
(function () {
  var seen = null;
  function poll() {
    fetch('/__costpress/version', {cache: 'no-store'}).then(function (r) { return r.json(); }).then(function (v) {
      if (seen !== null && v.version !== seen) { location.reload(); }
      seen = v.version;
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


def rebuild(content: Path, out: Path, templates: Path, state: State, log: Callable[[str], None]) -> None:
    """Build once; on bad input keep serving the last good site and report why."""
    try:
        clean_leftovers(out)
        result = render_site(content, templates)
        diff = publish(result.files, out)
    except CostpressError as exc:
        with state.lock:
            state.error = str(exc)
        log(f"build failed, still serving the last good site:\n{exc}")
        return
    with state.lock:
        state.error = None
        state.version += 1
    log(f"rebuilt: {len(diff.changed) + len(diff.added)} files written, {diff.unchanged} unchanged")


def make_handler(out: Path, state: State):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet server
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            if self.path.startswith("/__costpress/version"):
                with state.lock:
                    body = json.dumps({"version": state.version, "error": state.error}).encode()
                self._send(body, "application/json")
                return
            path = Path(self.translate_path(self.path))
            if path.is_dir():
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
            on_change()


def start(content: Path, out: Path, templates: Path, host: str, port: int, log: Callable[[str], None]):
    """Build, then serve and watch in background threads; returns (server, state, stop event)."""
    state = State()
    rebuild(content, out, templates, state, log)
    out.mkdir(parents=True, exist_ok=True)
    server = http.server.ThreadingHTTPServer((host, port), make_handler(out, state))
    stop, ready = threading.Event(), threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(
        target=watch,
        args=([content, templates], lambda: rebuild(content, out, templates, state, log), stop, ready),
        daemon=True,
    ).start()
    ready.wait(timeout=10)
    return server, state, stop
