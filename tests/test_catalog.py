"""The catalog, the checks and the fixtures stay in step: one ID ties them together."""

import pytest

from fluxgraph.catalog import REQUIRED_SECTIONS, catalog_dir, load_catalog
from fluxgraph.checks import registry

from .conftest import FIXTURES, ROOT

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
def test_rule_doc_states_its_severity_and_why(rule):
    """docs/severity.md: every rule doc gives its severity with the consequence behind it."""
    spec = CATALOG[rule]
    para = next((p for p in spec.body.split("\n\n") if p.startswith("**Severity:**")), None)
    assert para is not None, f"rules/{rule}.md has no **Severity:** paragraph"
    assert spec.severity.value in para.split(".")[0], f"rules/{rule}.md: the paragraph does not name {spec.severity.value}"


def test_severity_table_matches_the_catalog():
    rows = {}
    for line in (ROOT / "docs" / "severity.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells[1]
    assert rows == {rid: spec.severity.value for rid, spec in CATALOG.items()}


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


# the rules whose verdicts rest on what exists in the cluster or on the fields of Flux objects
# say what the cluster may add and how fluxgraph treats it (issue 21)
CLUSTER_ADDS = (
    "missing-substitute-from",
    "substitute-from-race",
    "generated-secret-not-awaited",
    "undefined-substitution-variable",
    "unsubstituted-flux-variable",
    "unescaped-shell-variable",
    "namespace-not-specified",
    "escape-without-substitution",
    "kustomize-build-error",
    "health-check-never-runs",
)


def test_rules_that_rest_on_the_cluster_say_what_it_may_add():
    catalog = load_catalog()
    missing = [r for r in CLUSTER_ADDS if not catalog[r].section("What the cluster may add")]
    assert missing == []
