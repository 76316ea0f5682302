"""The single exception type raised by the kustomize re-implementation for invalid input."""

from __future__ import annotations


class KustomizeError(Exception):
    """Invalid kustomize input (a bad patch, selector, generator entry, ...).

    Every function in ``fluxgraph.kustomize`` raises only this for bad input, whatever its
    shape, so callers can turn it into a build problem without catching anything broader.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message
