"""The ``fluxgraph`` program's entry point (console script and ``python -m fluxgraph``).

Kept apart from ``fluxgraph.cli`` so that the garbage collector's thresholds are raised before
the package is imported: importing creates tens of thousands of objects (53 dataclasses among
them), and with the default thresholds the collector ran repeatedly over them, 20 to 40 ms of
each run. ``cli.entry`` explains the rest; library callers never come through here.
"""

from __future__ import annotations


def run() -> None:
    import gc

    gc.set_threshold(100_000, 50, 1000)
    from fluxgraph.cli import entry

    entry()
