"""Hatch build hook: the rule catalog (``rules/``) ships inside the wheel as
``fluxgraph/_catalog`` (read by ``fluxgraph.catalog.catalog_dir``).

Only the standard wheel gets the copy. An editable install reads ``rules/`` from the checkout
(``catalog_dir`` falls back to it), so it needs none; and hatch writes a forced inclusion of an
editable wheel into site-packages, where a ``fluxgraph/_catalog`` copy is a ``fluxgraph/``
directory without ``__init__.py``: stale as soon as a rule doc changes, and, once the checkout
is moved or deleted, a namespace package that turns every ``fluxgraph`` command into
"No module named 'fluxgraph.cli'" instead of "No module named 'fluxgraph'".
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CatalogHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "standard":
            build_data["force_include"]["rules"] = "fluxgraph/_catalog"
