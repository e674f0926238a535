"""fixbot: fixes failing builds with a bounded, sandboxed, verified loop."""

__version__ = "0.1.0"
