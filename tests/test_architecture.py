"""docs/architecture.md stays true: every module it names exists."""

from __future__ import annotations

import importlib
import re

import pytest

from .conftest import ROOT

TEXT = (ROOT / "docs" / "architecture.md").read_text()
NAMES = sorted(set(re.findall(r"`(fluxgraph(?:\.[a-z_][a-z0-9_]*)+)", TEXT)))


def _resolves(name: str) -> bool:
    """A module, or an attribute of one (``fluxgraph.engine.group_by_cause``)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_the_page_names_modules():
    assert len(NAMES) > 20


@pytest.mark.parametrize("name", NAMES)
def test_named_module_exists(name):
    assert _resolves(name), f"docs/architecture.md names {name}, which does not exist"


def test_every_package_module_is_on_the_page():
    """A module nobody can find on the page is a module a newcomer never meets."""
    missing = []
    for path in sorted((ROOT / "fluxgraph").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        if any(p.startswith("_") for p in parts):
            continue  # private helpers
        mod = ".".join(parts)
        if mod == "fluxgraph" or mod.startswith(("fluxgraph.checks.", "fluxgraph.render.")):
            continue  # one module per rule and per format: the page names how to add them
        pkg = ".".join(mod.split(".")[:2])  # a subpackage's modules are met through it
        if f"`{mod}" not in TEXT and f"`{pkg}" not in TEXT:
            missing.append(mod)
    assert missing == []
