"""The ``fluxgraph`` program's entry point (console script and ``python -m fluxgraph``).

Kept apart from ``fluxgraph.cli`` so that the garbage collector's thresholds are raised before
the package is imported: importing creates tens of thousands of objects (53 dataclasses among
them), and with the default thresholds the collector ran repeatedly over them, 20 to 40 ms of
each run. ``cli.entry`` explains the rest; library callers never come through here.
"""

from __future__ import annotations

# A young-generation collection runs after this many new container objects. A run keeps almost
# everything it builds to the end, so each collection rescans live objects for nothing: 100,000
# cost about 20 ms a collection here (haraldkoch ran two, onedr0p one); at a million, repositories
# of a few hundred Kustomizations finish without one, and large ones still collect their cycles.
GC_THRESHOLDS = (1_000_000, 50, 1000)


def run() -> None:
    import gc

    gc.set_threshold(*GC_THRESHOLDS)
    from fluxgraph.cli import entry

    entry()
