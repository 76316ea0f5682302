"""Deep copies of JSON-like data charged to a budget, for the kustomize operations that copy
untrusted values (JSON 6902 ``copy``/``add``, ``replacements``): a patch that doubles a value
per operation must end in an error, not in the memory of the machine (docs/security.md)."""

from __future__ import annotations

from typing import Any

from fluxgraph.kustomize.errors import KustomizeError


class CopyBudget:
    """Values (containers and what they hold) that the copies of one operation may make, and
    how deep they may nest; ``what`` names the operation in the errors."""

    def __init__(self, limit: float, what: str, max_depth: float = float("inf")) -> None:
        self.left = limit
        self.limit = limit
        self.what = what
        self.max_depth = max_depth

    def copy(self, v: Any) -> Any:
        """An iterative deep copy of ``v``, charged to the budget."""
        if not isinstance(v, (dict, list)):
            return v
        root: Any = {} if isinstance(v, dict) else []
        stack: list[tuple[Any, Any, int]] = [(v, root, 1)]
        while stack:
            src, dst, depth = stack.pop()
            self.left -= len(src) + 1
            if self.left < 0:
                raise KustomizeError(f"{self.what} would copy more than {self.limit:.0f} values")
            if depth > self.max_depth:
                raise KustomizeError(f"{self.what} would nest the object deeper than {self.max_depth:.0f} levels")
            items = src.items() if isinstance(src, dict) else enumerate(src)
            for k, x in items:
                if isinstance(x, (dict, list)):
                    nx: Any = {} if isinstance(x, dict) else []
                    stack.append((x, nx, depth + 1))
                else:
                    nx = x
                if isinstance(dst, dict):
                    dst[k] = nx
                else:
                    dst.append(nx)
        return root
