"""The answer an article opens with: one figure, what it is, the setup it is for.

Each article kind picks its headline figure from what it computed; the page
shows it in a box above the text, with the date of the prices (templates
format it, the kind decides it).
"""

from __future__ import annotations


def answer(value: float, form: str, what: str, setup: str) -> dict:
    """`form` is a table-cell format name (usd, int, hours...); `what` says what the figure measures,
    `setup` what it is for ("LoRA, 1 × B200 at Nodus")."""
    return {"value": value, "form": form, "what": what, "setup": setup}
