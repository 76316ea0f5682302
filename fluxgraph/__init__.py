"""fluxgraph: a static analyzer for Flux CD GitOps repositories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from fluxgraph.api import Repository


def load(path: Any, **kwargs: Any) -> Repository:
    """Build the reconcile model of the repository at ``path`` (see ``fluxgraph.api.load``)."""
    from fluxgraph.api import load as _load

    return _load(path, **kwargs)


__all__ = ["__version__", "load"]
