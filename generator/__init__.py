"""costpress: GPU cost articles computed from dated price snapshots."""

__version__ = "0.2.0"
