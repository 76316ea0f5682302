"""Which Flux a cluster runs, read from the repository, and what follows from it.

A repository pins the Flux it runs in one of a few places, each read here from what the
cluster's own builds read or apply:

* ``flux-system/gotk-components.yaml``, written by ``flux bootstrap``/``flux install --export``:
  its header ``# Flux Version: v2.3.0``;
* a flux-operator ``FluxInstance`` (``spec.distribution.version``, e.g. ``2.x``, ``2.7.x``,
  ``2.9.4``), or the ``instance.distribution.version`` values of a HelmRelease of the
  flux-instance chart; a range resolves to the newest release that a pinned
  ``distribution.artifact`` (``flux-operator-manifests:v0.46.0``) carries;
* the ``oci://ghcr.io/fluxcd/flux-manifests`` OCIRepository a Kustomization installs Flux from
  (``spec.ref.tag``);
* a kustomization resource ``github.com/fluxcd/flux2/manifests/install?ref=v2.2.3`` or the
  release's ``install.yaml`` URL.

The controllers' ``--feature-gates`` flag, written in the patches a cluster applies to them,
overrides a default that depends on the version: ``StrictPostBuildSubstitutions`` is opt-in
from kustomize-controller v1.3 (Flux 2.3) and on by default from v1.9 (Flux 2.9;
kustomize-controller ``internal/features/features.go``, "opt-out from v1.9", commit 82f09cb,
KC#1671).

Not evaluated: a version only the cluster knows (``flux install`` run by hand, a Terraform
``flux_bootstrap_git`` resource); the latest release is assumed then, and the report says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fluxgraph.model import as_dict, as_list
from fluxgraph.repofs import FileTooLarge, PathEscape

if TYPE_CHECKING:
    from fluxgraph.cluster import ClusterModel
    from fluxgraph.filecache import FileCache

LATEST = (2, 9)  # the newest Flux release fluxgraph models
STRICT_FROM = (2, 9)  # StrictPostBuildSubstitutions on by default (kustomize-controller v1.9)
WATCH_FROM = (2, 7)  # kustomize-controller v1.7 watches labelled substituteFrom objects
DEFAULT_WATCH = "reconcile.fluxcd.io/watch=Enabled"

_HEADER = re.compile(rb"^# Flux Version: v?(\d+\.\d+(?:\.\d+)?)", re.M)
_INSTALL = re.compile(r"fluxcd/flux2/(?:manifests/install\?ref=|releases/download/)v?(\d+\.\d+(?:\.\d+)?)")
_GATE = re.compile(r"--feature-gates=\S*?StrictPostBuildSubstitutions=(true|false)", re.I)
_WATCH = re.compile(r"--watch-configs-label-selector[= ]['\"]?([^\s'\"]+)")
_VERSION = re.compile(r"^[v=~^>< ]*(\d+)(?:\.(\d+|x|\*))?")


@dataclass(frozen=True)
class FluxRelease:
    """The Flux a cluster runs: ``version`` as written (``None``: not found, the latest is
    assumed), ``where`` it was read, and the ``StrictPostBuildSubstitutions`` feature gate
    where the cluster sets it (``strict_gate``, ``gate_where``)."""

    version: str | None = None
    where: str = ""
    strict_gate: bool | None = None
    gate_where: str = ""
    # kustomize-controller's --watch-configs-label-selector, where the cluster sets it
    watch_selector: str | None = None

    @property
    def minor(self) -> tuple[int, int]:
        """(major, minor) of the version; ``2.x`` and an unknown version are the latest."""
        return parse_minor(self.version) if self.version else LATEST

    @property
    def strict(self) -> bool:
        """Whether kustomize-controller fails a build on an unset variable."""
        if self.strict_gate is not None:
            return self.strict_gate
        return self.minor >= STRICT_FROM

    def watches(self, labels: dict[str, str]) -> bool:
        """Whether kustomize-controller reconciles the Kustomizations that substitute from a
        ConfigMap/Secret with these labels as soon as it changes: from kustomize-controller
        v1.7 (Flux 2.7, commit 2dcec19) it watches the ones its
        ``--watch-configs-label-selector`` selects, by default ``reconcile.fluxcd.io/watch=Enabled``
        (docs/spec/v1/kustomizations.md, "Reacting immediately to configuration dependencies")."""
        if self.minor < WATCH_FROM:
            return False
        from fluxgraph.materialize import parse_label_selector, selector_matches

        sel = parse_label_selector(self.watch_selector or DEFAULT_WATCH)
        return sel is not None and selector_matches(sel, labels)

    def describe(self) -> str:
        what = f"Flux {self.version} ({self.where})" if self.version else f"Flux {LATEST[0]}.{LATEST[1]} (assumed: no version in the repository)"
        if self.strict_gate is not None:
            what += f", StrictPostBuildSubstitutions={str(self.strict_gate).lower()} ({self.gate_where})"
        return what


def parse_minor(version: str) -> tuple[int, int]:
    """(major, minor) of a version or version range as the repository writes it: ``v2.3.0``,
    ``2.7.x``, ``2.x`` (the latest minor of that major)."""
    m = _VERSION.match(version.strip())
    if not m:
        return LATEST
    major = int(m.group(1))
    minor = m.group(2)
    if minor is None or not minor.isdigit():
        return LATEST if major == LATEST[0] else (major, 99)
    return major, int(minor)


def detect(model: ClusterModel, cache: FileCache) -> FluxRelease:
    """The Flux the cluster ``model`` runs, from the files its builds read and the objects
    they apply (the first pin found, in the order of the module's list)."""
    files = sorted({f for ks in model.kustomizations.values() for f in ks.files})
    version, where = None, ""
    for f in files:
        if f.endswith("gotk-components.yaml"):
            try:
                head = cache.read_bytes(f)[:4096]
            except (OSError, FileTooLarge, PathEscape):
                continue
            hm = _HEADER.search(head)
            if hm:
                version, where = hm.group(1).decode(), f"{f}: # Flux Version"
                break
    for obj in model.objects() if version is None else ():
        ref = obj.ref
        spec = as_dict(obj.data.get("spec"))
        found: str | None = None
        distribution: dict[str, Any] = {}
        if ref.kind == "FluxInstance":
            distribution = as_dict(spec.get("distribution"))
        elif ref.kind == "HelmRelease":
            distribution = as_dict(as_dict(as_dict(spec.get("values")).get("instance")).get("distribution"))
        elif ref.kind == "OCIRepository" and str(spec.get("url", "")).rstrip("/").endswith("fluxcd/flux-manifests"):
            found = _str(as_dict(spec.get("ref")).get("tag"))
        found = found or _str(distribution.get("version"))
        default = ""
        if not found and _str(distribution.get("artifact")):
            # the flux-instance chart's values default instance.distribution.version to 2.x
            found, default = "2.x", " (no version: the default 2.x)"
        if found:
            version, where = found.lstrip("v"), f"{obj.location.file}: {ref.kind} {ref.name}{default}"
            capped = _capped(version, _str(distribution.get("artifact")))
            if capped is not None:
                version, where = capped[0], f"{where}, the newest in {capped[1]}"
            break
    if version is None:
        for f in files:
            if not f.endswith(("kustomization.yaml", "kustomization.yml", "Kustomization")):
                continue
            docs, _ = cache.documents(f)
            k = as_dict(docs[0].data) if docs else {}
            for e in as_list(k.get("resources")):
                m = _INSTALL.search(e) if isinstance(e, str) else None
                if m:
                    version, where = m.group(1), f"{f}: {e}"
                    break
            if version is not None:
                break
    # the gate, in the controllers' patches, a FluxInstance's kustomize.patches or the values
    # of a chart: wherever it is written, it is in a file the cluster's builds read
    gate: bool | None = None
    gate_where = ""
    watch: str | None = None
    for f in files:
        if gate is not None and watch is not None:
            break
        try:
            raw = cache.read_bytes(f)
        except (OSError, FileTooLarge, PathEscape):
            continue
        if gate is None and b"StrictPostBuildSubstitutions" in raw:
            m = _GATE.search(raw.decode("utf-8", "replace"))
            if m:
                gate, gate_where = m.group(1).lower() == "true", f
        if watch is None and b"--watch-configs-label-selector" in raw:
            w = _WATCH.search(raw.decode("utf-8", "replace"))
            if w:
                watch = w.group(1)
    return FluxRelease(version, where, gate, gate_where, watch)


# flux-operator's distribution artifact (``spec.distribution.artifact``,
# ``oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:<tag>``) carries the Flux
# releases of the operator's ``config/data/flux`` at that version, and a version range in the
# FluxInstance (``2.x``) resolves to the newest of those. The first operator release that
# carries each Flux minor (controlplaneio-fluxcd/flux-operator, ``git ls-tree <tag>
# config/data/flux``): v0.21.0 Flux 2.6.0, v0.30.0 2.7.0, v0.42.0 2.8.0, v0.53.0 2.9.0.
OPERATOR_FIRST_CARRIES = (((0, 53), (2, 9)), ((0, 42), (2, 8)), ((0, 30), (2, 7)), ((0, 21), (2, 6)))
_ARTIFACT_TAG = re.compile(r"flux-operator-manifests:v?(\d+)\.(\d+)(?:\.\d+)?")


def _capped(version: str, artifact: str | None) -> tuple[str, str] | None:
    """The version range ``version`` as the pinned operator artifact resolves it, where the
    artifact carries no release as new as the range allows (``2.x`` with
    ``flux-operator-manifests:v0.46.0``: Flux 2.8); None where the artifact is not pinned to a
    release (``latest``, a digest, none), or caps nothing."""
    if not artifact or not re.search(r"[x*]|[<>~^]", version):
        return None
    m = _ARTIFACT_TAG.search(artifact)
    if not m:
        return None
    operator = (int(m.group(1)), int(m.group(2)))
    newest = next((flux for first, flux in OPERATOR_FIRST_CARRIES if operator >= first), None)
    if newest is None or parse_minor(version) <= newest:
        return None
    return f"{newest[0]}.{newest[1]}.x", f"flux-operator-manifests {m.group(0).split(':', 1)[1]}"


def _str(v: Any) -> str | None:
    return str(v) if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v) else None
