"""The catalog, the checks and the fixtures stay in step: one ID ties them together."""

import pytest

from fluxgraph.catalog import REQUIRED_SECTIONS, catalog_dir, load_catalog
from fluxgraph.checks import registry

from .conftest import FIXTURES

CATALOG = load_catalog()
CHECKS = registry()


def test_every_check_has_a_catalog_entry_and_back():
    assert sorted(CHECKS) == sorted(CATALOG), "rules/*.md and fluxgraph/checks/*.py must list the same IDs"


@pytest.mark.parametrize("rule", sorted(CATALOG))
def test_rule_doc_is_complete(rule):
    spec = CATALOG[rule]
    missing = [s for s in REQUIRED_SECTIONS if s not in spec.sections]
    assert not missing, f"rules/{rule}.md lacks sections {missing}"
    assert spec.section("How to suppress"), f"rules/{rule}.md: empty How to suppress"
    assert "\n" not in spec.fix and len(spec.fix) < 160, "fix is a one-line hint"


@pytest.mark.parametrize("rule", sorted(CATALOG))
def test_rule_has_good_and_bad_fixture(rule):
    for kind in ("good", "bad"):
        d = FIXTURES / rule / kind
        assert d.is_dir(), f"fixtures/{rule}/{kind}/ is missing"


def test_no_stray_fixture_dirs():
    known = set(CATALOG) | {"repos"}
    stray = [p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name not in known]
    assert not stray, f"fixture dirs without a rule: {stray}"


def test_catalog_dir_is_the_rules_folder():
    assert (catalog_dir() / f"{next(iter(CATALOG))}.md").exists()
