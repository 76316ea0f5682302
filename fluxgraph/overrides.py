"""Values that a Flux Kustomization's ``spec.patches`` override in the Kustomizations and
HelmReleases its build applies: what the object's own document declares, and what Flux applies
instead (rule ``parent-patch-overrides-child``; ``fluxgraph explain``).

kustomize-controller writes ``spec.patches`` into the kustomization it builds (fluxcd/pkg
``kustomize/kustomize_generator.go`` ``WriteFile``), where kustomize applies them like any
``patches`` entry: a strategic merge patch or a JSON 6902 patch *sets* the fields it names,
whatever the object says (kustomize ``api/filters/patchstrategicmerge``, kyaml ``merge2``: a
custom resource has no merge schema, so every list the patch names is replaced, see
``fluxgraph.kustomize.smp``). A parent that "adds defaults" to every child Kustomization, or gives
every child Kustomization a patch that "adds defaults" to every HelmRelease, overrides the values
a child declares for itself.

Pure functions over a loaded model. For each Kustomization or HelmRelease a Flux Kustomization
applies, the fields its document declares (``AppliedObject.resource.doc``, at leaf level) are
compared with the object as applied, before and after the owner's substitution
(``AppliedObject.pre_substitution`` / ``data``): a value only substitution changed
(``${VAR}`` -> value) is not an override, nor a field the document does not declare (the patch
adds it), nor a list the patch only extends (every declared element is still there). A changed
field is attributed to the owner's ``spec.patches`` entry that sets it, found by applying each
entry alone to the document as written (the last entry that gives the applied value wins); a
change no entry explains (a kustomization file's own patches, replacements, a generated name's
hash suffix) is not an override of this kind. Where the entry's text is written is found the same
way one level up: a parent's patch that writes the entry into the owner's ``spec.patches``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fluxgraph import flux
from fluxgraph.cluster import AppliedObject, ClusterModel, KustomizationNode
from fluxgraph.kustomize import json6902, selector, smp
from fluxgraph.kustomize.errors import KustomizeError
from fluxgraph.model import Location, as_dict, as_list, dotted, value_at
from fluxgraph.yamlio import load_text

# the objects whose spec drives the reconcile: a parent's patch reaches them as "children"
WATCHED = frozenset({(flux.KUSTOMIZE_GROUP, "Kustomization"), (flux.HELM_GROUP, "HelmRelease")})


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # a field the object as applied does not have (the patch removed it)

Path = tuple[Any, ...]


@dataclass(frozen=True)
class PatchSite:
    """A ``spec.patches`` entry of the Kustomization whose build applies it, and where its text
    is written: in that Kustomization's own document, or in a parent's patch that writes it into
    that Kustomization's ``spec.patches``."""

    ks_id: str  # the Kustomization whose build applies the patch
    index: int  # its index in that Kustomization's spec.patches
    location: Location  # where the patch's text is written
    written_in: str  # the Kustomization whose document holds that text
    written_index: int  # the entry's index in that document's spec.patches
    target: str  # what the entry selects, in words: "every HelmRelease"
    blanket: bool  # it selects every object of a kind (group, version, namespace, a name pattern)

    @property
    def text(self) -> str:
        """Where the text is, the same for every Kustomization it is written into."""
        return f"spec.patches[{self.written_index}] of Kustomization {self.written_in} at {self.location.file_line}"

    @property
    def own(self) -> bool:
        """The text is in the applying Kustomization's own document."""
        return self.written_in == self.ks_id and self.written_index == self.index

    def describe(self) -> str:
        """This entry, for a finding about one object."""
        if self.own:
            return self.text
        return f"spec.patches[{self.index}] of Kustomization {self.ks_id}, written there by {self.text}"

    def patch_text(self) -> str:
        """The patch, the same for every Kustomization it is written into (for grouping)."""
        if self.own:
            return f"{self.text}, a patch of {self.target},"
        return f"{self.text} gives the Kustomizations it selects a patch of {self.target}, which"


@dataclass(frozen=True)
class Override:
    obj: AppliedObject
    path: Path  # the declared field, e.g. ("spec", "prune")
    written: Any  # the value the object's document declares
    applied: Any  # the value Flux applies (after the owner's substitution); MISSING when removed
    site: PatchSite

    @property
    def field(self) -> str:
        return dotted(self.path)

    @property
    def location(self) -> Location:
        """The declared field in the object's document: the line a person must change."""
        return self.obj.resource.position(self.path)


def show(v: Any, limit: int = 60) -> str:
    """A value as a person would write it in YAML, on one line."""
    if v is MISSING:
        return "(removed)"
    if isinstance(v, str):
        text = v if v and v.strip() == v and not v.startswith(("{", "[")) else json.dumps(v)
    else:
        text = json.dumps(v, separators=(", ", ": "), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- comparing values -----------------------------------------------------------------------


def _get(data: Any, path: Path) -> Any:
    return value_at(data, path, MISSING)


def _same(a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):  # True == 1 in Python, not in JSON
        return type(a) is type(b) and a == b
    return bool(a == b)


def _overridden(written: Any, applied: Any) -> bool:
    """``applied`` does not hold what ``written`` declares. A list holds it when every declared
    element is still there (a patch that only appends does not override)."""
    if applied is MISSING:
        return True
    if isinstance(written, list):
        return not isinstance(applied, list) or any(not any(_same(e, x) for x in applied) for e in written)
    return not _same(written, applied)


def _declared(spec: dict[Any, Any], path: Path) -> Iterator[tuple[Path, Any]]:
    """The leaves a document declares: scalars and lists; an empty mapping, an empty list or a
    null declares nothing (Flux's API types read them as absent)."""
    for k, v in spec.items():
        p = (*path, k)
        if isinstance(v, dict):
            yield from _declared(v, p)
        elif v is None or v == []:
            continue
        else:
            yield p, v


# -- one patch entry on one object ------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _documents(text: str) -> tuple[Any, ...] | None:
    try:
        return tuple(d for d in load_text(text) if d is not None)
    except Exception:  # noqa: BLE001 - an invalid patch fails the build; kustomize-build-error reports it
        return None


_LITERAL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _deliberate(target: dict[str, Any]) -> bool:
    """The target picks its objects rather than every object of a kind: by name
    (``name: podinfo``, ``name: (a|b)``), or by a label or annotation the object carries to opt
    in. A patch like that is a setting for those objects, not a default for all of them."""
    if target.get("labelSelector") or target.get("annotationSelector"):
        return True
    name = target.get("name")
    if not isinstance(name, str) or not name:
        return False
    inner = name.removeprefix("^").removesuffix("$")
    if inner.startswith("(") and inner.endswith(")"):
        inner = inner[1:-1]
    return all(_LITERAL.fullmatch(part) for part in inner.split("|"))


def _by_identity(doc: dict[str, Any], current: dict[str, Any]) -> bool:
    """kustomize's match of an untargeted strategic merge patch: kind, name, namespace (when
    the patch gives one) and API group (when it gives an apiVersion)."""
    md, cmd = as_dict(doc.get("metadata")), as_dict(current.get("metadata"))
    if doc.get("kind") != current.get("kind") or md.get("name") != cmd.get("name"):
        return False
    if md.get("namespace") is not None and md.get("namespace") != cmd.get("namespace"):
        return False
    av = doc.get("apiVersion")
    cav = current.get("apiVersion")
    return not isinstance(av, str) or not isinstance(cav, str) or av.rpartition("/")[0] == cav.rpartition("/")[0]


def _selects(current: dict[str, Any], target: dict[str, Any]) -> bool:
    try:
        return selector.matches(current, target)
    except KustomizeError:
        return False


def apply_entry(entry: dict[str, Any], written: dict[str, Any], current: dict[str, Any]) -> tuple[bool, bool, Any]:
    """Apply one ``spec.patches`` entry alone to ``written`` (the object's document), selecting
    on ``current`` (the object as built). Returns (selected, deliberate, result): ``deliberate``
    when the entry picks the object by name or by an opt-in label (``_deliberate``, or an
    untargeted patch matched by identity); the result is None when the entry does not apply
    cleanly to the document alone."""
    text = entry.get("patch")
    target = entry.get("target")
    docs = _documents(text) if isinstance(text, str) else None
    if not docs:
        return False, False, None
    if len(docs) == 1 and isinstance(docs[0], list):  # JSON 6902
        if not isinstance(target, dict) or not _selects(current, target):
            return False, False, None
        try:
            return True, _deliberate(target), json6902.apply_json6902(written, docs[0])
        except KustomizeError:
            return True, _deliberate(target), None
    out: Any = written
    selected = deliberate = False
    for doc in docs:
        if not isinstance(doc, dict):
            return False, False, None
        if isinstance(target, dict):
            if not _selects(current, target):
                continue
            # a targeted patch's own kind and name are placeholders (kustomize's patch transformer)
            patch = dict(doc)
            md = dict(as_dict(patch.get("metadata")))
            md.pop("name", None)
            md.pop("namespace", None)
            patch["metadata"] = md
            patch.pop("kind", None)
            patch.pop("apiVersion", None)
            deliberate = deliberate or _deliberate(target)
        elif _by_identity(doc, current):
            patch = doc
            deliberate = True
        else:
            continue
        selected = True
        try:
            out = smp.apply_smp(out, patch)
        except KustomizeError:
            return True, deliberate, None
        if out is None:  # the patch deletes the object
            return True, deliberate, None
    return selected, deliberate, out if selected else None


def _target_text(entry: dict[str, Any]) -> str:
    """What an entry selects, in words: ``every HelmRelease``, ``every Kustomization named
    like apps-.*``, ``Kustomization/flux-system/apps`` (untargeted)."""
    t = entry.get("target")
    if not isinstance(t, dict):
        docs = _documents(entry.get("patch", "")) if isinstance(entry.get("patch"), str) else None
        first = docs[0] if docs and isinstance(docs[0], dict) else {}
        return f"{first.get('kind', 'object')} {as_dict(first.get('metadata')).get('name', '?')}"
    out = f"every {t['kind']}" if t.get("kind") else "every object"
    if t.get("name"):
        out += f" named like {t['name']}"
    if t.get("namespace"):
        out += f" in namespaces like {t['namespace']}"
    if t.get("labelSelector"):
        out += f" with labels {t['labelSelector']}"
    if t.get("annotationSelector"):
        out += f" with annotations {t['annotationSelector']}"
    return out


def entries(node: KustomizationNode | None) -> list[tuple[int, dict[str, Any]]]:
    """The usable ``spec.patches`` entries of a Kustomization (as applied), with their index."""
    if node is None:
        return []
    return [
        (i, e)
        for i, e in enumerate(as_list(node.spec.spec.get("patches")))
        if isinstance(e, dict) and isinstance(e.get("patch"), str) and (e.get("target") is None or isinstance(e.get("target"), dict))
    ]


# -- the model --------------------------------------------------------------------------------


class _Sites:
    """Where each ``spec.patches`` entry of a cluster's Kustomizations is written (memoised)."""

    def __init__(self, cluster: ClusterModel) -> None:
        self.cluster = cluster
        self.memo: dict[tuple[str, int], tuple[Location, str, int]] = {}

    def site(self, ks_id: str, index: int, entry: dict[str, Any], deliberate: bool) -> PatchSite:
        loc, written_in, written_index = self._written(ks_id, index, ())
        return PatchSite(ks_id, index, loc, written_in, written_index, _target_text(entry), not deliberate)

    def _written(self, ks_id: str, index: int, seen: tuple[str, ...]) -> tuple[Location, str, int]:
        key = (ks_id, index)
        if key not in self.memo:
            self.memo[key] = self._find(ks_id, index, seen)
        return self.memo[key]

    def _find(self, ks_id: str, index: int, seen: tuple[str, ...]) -> tuple[Location, str, int]:
        cluster = self.cluster
        node = cluster.kustomizations[ks_id]
        decl = node.declared_by
        if decl is None or decl.resource.doc is None or not isinstance(decl.resource.doc.data, dict):
            return node.declared_at or node.spec.location, ks_id, index
        written = decl.resource.doc.data
        pre = as_list(value_at(decl.pre_substitution, ("spec", "patches")))
        mine = as_list(value_at(written, ("spec", "patches")))
        entry = pre[index] if index < len(pre) else None
        if entry is not None:
            if index < len(mine) and mine[index] == entry:
                return decl.resource.position(("spec", "patches", index)), ks_id, index
            if entry in mine:
                j = mine.index(entry)
                return decl.resource.position(("spec", "patches", j)), ks_id, j
            # written into this Kustomization's spec.patches by a patch of the one that applies it
            owner = cluster.kustomizations.get(decl.owner)
            if owner is not None and owner.id not in seen and owner.id != ks_id:
                for m, pe in entries(owner):
                    sel, _, out = apply_entry(pe, written, decl.pre_substitution)
                    if sel and out is not None and entry in as_list(value_at(out, ("spec", "patches"))):
                        return self._written(owner.id, m, (*seen, ks_id))
        return decl.resource.position(("spec", "patches")), ks_id, index


def _object_overrides(cluster: ClusterModel, obj: AppliedObject, sites: _Sites) -> list[Override]:
    if (obj.ref.group, obj.ref.kind) not in WATCHED:
        return []
    node = cluster.kustomizations.get(obj.owner)
    patches = entries(node)
    doc = obj.resource.doc
    if node is None or not patches or doc is None or not isinstance(doc.data, dict):
        return []
    written = doc.data
    spec = written.get("spec")
    if not isinstance(spec, dict):
        return []
    pre, post = obj.pre_substitution, obj.data
    changed = [
        (p, w)
        for p, w in _declared(spec, ("spec",))
        # substitution alone changes nothing: compare with the object before and after it
        if _overridden(w, _get(pre, p)) and _overridden(w, _get(post, p))
    ]
    if not changed:
        return []
    results = []
    for i, e in patches:
        sel, deliberate, out = apply_entry(e, written, pre)
        if sel and out is not None:
            results.append((i, e, deliberate, out))
    found = []
    for p, w in changed:
        want = _get(pre, p)
        setters = [r for r in results if _overridden(w, _get(r[3], p))]
        if not setters:
            continue  # not a Flux patch of the owner (a kustomization's patches, a hash suffix...)
        i, e, deliberate, _ = next((r for r in reversed(setters) if _same(_get(r[3], p), want)), setters[-1])
        found.append(Override(obj, p, w, _get(post, p), sites.site(node.id, i, e, deliberate)))
    return found


def cluster_overrides(cluster: ClusterModel) -> list[Override]:
    """Every declared value of a Kustomization or HelmRelease of the cluster that its owner's
    ``spec.patches`` override, in model order."""
    sites = _Sites(cluster)
    out: list[Override] = []
    for obj in cluster.objects():
        out.extend(_object_overrides(cluster, obj, sites))
    return out


def object_overrides(cluster: ClusterModel, obj: AppliedObject) -> list[Override]:
    """The overrides of one object (for ``fluxgraph explain``)."""
    return _object_overrides(cluster, obj, _Sites(cluster))


def watched(cluster: ClusterModel) -> list[AppliedObject]:
    """The objects the comparison looks at: Kustomizations and HelmReleases whose owner has
    ``spec.patches`` (for counting assertions)."""
    return [
        o
        for o in cluster.objects()
        if (o.ref.group, o.ref.kind) in WATCHED and entries(cluster.kustomizations.get(o.owner))
    ]
