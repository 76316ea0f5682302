"""The two shared corpora of real repositories, their cluster entrypoints, and one built report
per repository shared by every test that reads them (``report``).

``../shared/corpus`` holds 11 repositories at pinned commits (data files only);
``../shared/corpus-wide`` 33 more, whole trees, varied on purpose (its README and
``manifest.tsv``). Tests over the corpus are marked ``corpus``, over the wide corpus
``corpus_wide``: tiers the default ``python -m pytest`` leaves out and ``.ci/run`` runs (``-m
"corpus or corpus_wide"``); both skip cleanly where a corpus is absent.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from fluxgraph.engine import Report, analyze
from fluxgraph.model import FluxgraphError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
CORPUS_WIDE = ROOT.parent / "shared" / "corpus-wide"
CORPORA = {"corpus": CORPUS, "corpus-wide": CORPUS_WIDE}


@dataclass(frozen=True)
class Entry:
    """A repository's clusters: ``entrypoints`` (the directories of their root
    Kustomizations; empty for a repository with no cluster of its own), ``clusters`` (the
    configuration's ``clusters:`` a maintainer would write where no file of the repository
    tells, else None), and for a repository with no cluster, the kind of repository the
    message must name (``tenant``, ``argocd``, ``none``)."""

    entrypoints: tuple[str, ...]
    clusters: tuple[str, ...] | None = None
    none_kind: str = ""


# ../shared/corpus: the entrypoints its README lists, braces expanded
ENTRYPOINTS = {
    "fluxcd__flux2-kustomize-helm-example": Entry(("clusters/production", "clusters/staging")),
    "fluxcd__flux2-multi-tenancy": Entry(("clusters/production", "clusters/staging")),
    "fluxcd__flux2-monitoring-example": Entry(("clusters/test",)),
    "Azure__gitops-flux2-kustomize-helm-mt": Entry(("clusters/production", "clusters/staging")),
    "onedr0p__home-ops": Entry(("kubernetes/flux/cluster",)),
    "bjw-s-labs__home-ops": Entry(("kubernetes/flux/cluster",)),
    "joryirving__home-ops": Entry(("kubernetes/clusters/main", "kubernetes/clusters/test", "kubernetes/clusters/utility")),
    "haraldkoch__kochhaus-home": Entry(
        ("kubernetes/main/flux/cluster", "kubernetes/network/flux/cluster", "kubernetes/registry/flux/cluster")
    ),
    "xunholy__k8s-gitops": Entry(("kubernetes/clusters/cluster-00",)),
    "toboshii__home-ops": Entry(("cluster/flux",)),
    "Aviator-Coding__home-ops": Entry(("kubernetes/flux/cluster",)),
}

# ../shared/corpus-wide: manifest.tsv's entrypoints; for its `?` rows, what the repository's
# files establish (each comment says how: the file that declares the root, and why other
# cluster-looking folders are not clusters). `clusters` is set where only something outside the
# files (Terraform state, the maintainer's word in a README) tells a live folder from a stale one.
WIDE_ENTRYPOINTS = {
    "fluxcd__flux2-hub-spoke-example": Entry(("hub",)),
    "angelnu__k8s-gitops": Entry(("clusters/prod/config", "clusters/test/config")),
    # Terraform (terraform/infra/live/clusters/_shared/units/flux.hcl: git_path =
    # kubernetes/clusters/cluster-${tenant_id}) syncs cluster-101 and cluster-104 through a
    # FluxInstance; kubernetes/clusters/production (legacy name of cluster-101) and
    # kubernetes/flux (a gotk-sync that builds only Flux itself) are stale bootstrap folders no
    # file marks as such; cluster-102 lists a ./flux-system not yet written (not bootstrapped),
    # and bootstrap/dual-stack-services is commented out of cluster-101's apps
    "sulibot__home-ops": Entry(
        ("kubernetes/clusters/cluster-101", "kubernetes/clusters/cluster-104"),
        clusters=("kubernetes/clusters/cluster-101", "kubernetes/clusters/cluster-104"),
    ),
    "billimek__k8s-gitops": Entry(("setup/flux/cluster",)),
    "zhorvath83__home-ops": Entry(("kubernetes/flux/cluster",)),
    "controlplaneio-fluxcd__d2-fleet": Entry(("clusters/prod-eu", "clusters/prod-us", "clusters/staging", "clusters/update")),
    "controlplaneio-fluxcd__d2-infra": Entry((), none_kind="tenant"),
    "controlplaneio-fluxcd__d2-apps": Entry((), none_kind="tenant"),
    # an Argo CD repository upstream; the corpus copy holds no manifest at all (flake.nix)
    "kid__home-ops": Entry((), none_kind="none"),
    "mmalyska__home-ops": Entry((), none_kind="argocd"),
    "rcdailey__home-ops": Entry(("kubernetes/flux/cluster",)),
    "rwlove__home-ops": Entry(("kubernetes/flux/cluster",)),
    "mirceanton__home-ops": Entry(("apps",)),
    # one cluster reached from two roots: the legacy `cluster` Kustomization
    # (kubernetes/flux/config/cluster.yaml, path ./kubernetes/flux, applied by the bootstrap
    # Taskfile) and the flux-instance HelmRelease it applies, whose FluxInstance syncs
    # kubernetes/flux/cluster; only the legacy root applies kubernetes/flux/vars and the
    # HelmRepositories, so both are live
    "gavinmcfall__home-ops": Entry(("kubernetes/flux",)),
    "tyriis__home-ops": Entry(("devenv/oci/flux", "kubernetes/main/flux", "kubernetes/utility/flux")),
    "buroa__k8s-gitops": Entry(("kubernetes/flux/cluster",)),
    "szinn__k8s-homelab": Entry(("kubernetes/main/cluster/config", "kubernetes/staging/cluster/config")),
    "carpenike__k8s-gitops": Entry(("kubernetes/cluster-0/flux", "kubernetes/nas-1/flux")),
    "bo0tzz__kube": Entry((".",)),
    # README: flux bootstrap --path=clusters/my-cluster; flux-system/ not committed, the
    # folder holds the Flux Kustomizations and the ConfigMap they substitute from
    "stefanprodan__gitops-istio": Entry(("clusters/my-cluster",)),
    "JJGadgets__Biohazard": Entry(("kube/clusters/biohazard/flux",)),
    "truxnell__home-cluster": Entry(("kubernetes/hegira/flux", "kubernetes/helios/flux")),
    "Diaoul__home-ops": Entry(("kubernetes/flux/cluster",)),
    "ahgraber__homelab-gitops-k3s": Entry(("kubernetes/flux/cluster",)),
    "wrmilling__k3s-gitops": Entry((".",)),
    # k8s/media/flux/gotk-sync.yaml: root Kustomization flux-deploy, path its own folder;
    # k8s/nebula/flux/config is the same layout for a cluster its README says is turned off
    # ("This cluster has been turned off"), which no manifest tells
    "samip5__k8s-cluster": Entry(("k8s/media/flux",), clusters=("k8s/media/flux",)),
    # flux-instance values (kubernetes/apps/flux-system/instance/ks/helm-values.yaml): sync.path
    # kubernetes/cluster; AGENTS.md says the same
    "jfroy__flatops": Entry(("kubernetes/cluster",)),
    # cluster/base/flux-system/gotk-sync.yaml (path ./cluster/base), the README's kubectl
    # apply --kustomize=./cluster/base/flux-system; k8s/clusters/bloopysphere/bootstrap is an
    # experiment its k8s/README.md says to disregard ("Disregard these folders"), a
    # self-applying gotk-sync no manifest tells from a live one
    "h3mmy__bloopySphere": Entry(("cluster/base",), clusters=("cluster/base",)),
    # flux-instance values (kubernetes/apps/flux-system/flux-instance/app/resources/values.yaml,
    # installed by bootstrap/helmfile.yaml): sync.path kubernetes/flux/cluster
    "mchestr__home-cluster": Entry(("kubernetes/flux/cluster",)),
    # cluster/base/flux-system/gotk-sync.yaml (path ./cluster/base); README: "base directory is
    # the entrypoint to Flux"
    "Kashalls__home-cluster": Entry(("cluster/base",)),
    # k8s/prod/flux/config/cluster.yaml: Kustomization `cluster`, path ./k8s/prod/flux (its
    # parent), applied by the bootstrap Taskfile (kubectl apply --kustomize flux/config)
    "Ramblurr__home-ops": Entry(("k8s/prod/flux",)),
    # k8s/clusters/homelab-talos-0/flux/flux-system/gotk-sync.yaml (path: that folder)
    "0dragosh__homelab": Entry(("k8s/clusters/homelab-talos-0/flux",)),
    # no bootstrap: every README starts "You have Weave GitOps Enterprise installed on a
    # cluster" and adds this repository's folders to the reader's own fleet
    "weaveworks__weave-gitops-quickstart": Entry((), none_kind="tenant"),
}

TABLES = {"corpus": ENTRYPOINTS, "corpus-wide": WIDE_ENTRYPOINTS}


@dataclass(frozen=True)
class Outcome:
    """What ``fluxgraph check`` makes of a repository: a report, or the error it stops with."""

    report: Report | None
    error: str = ""


@functools.cache
def report(corpus: str, name: str) -> Outcome:
    """The report of ``corpus``/``name``, built once per test session (with the
    configuration's ``clusters:`` where the table gives one)."""
    entry = TABLES[corpus].get(name)
    kwargs = {"clusters": list(entry.clusters)} if entry is not None and entry.clusters else {}
    try:
        return Outcome(analyze(CORPORA[corpus] / name, **kwargs))
    except FluxgraphError as e:
        return Outcome(None, str(e))


def names(corpus: str) -> list[str]:
    """The repositories of ``corpus`` present on this machine (none where it is absent)."""
    root = CORPORA[corpus]
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
