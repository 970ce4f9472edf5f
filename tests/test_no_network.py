"""A build makes no network request."""

from __future__ import annotations

import socket

from conftest import build


def test_build_with_sockets_blocked(tmp_path, monkeypatch):
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network blocked by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    result, out = build(tmp_path)
    assert result.exit_code == 0, result.output
    assert attempts == []
    assert (out / "assets" / "plotly.min.js").stat().st_size > 1_000_000  # shipped, not fetched
