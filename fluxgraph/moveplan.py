"""``fluxgraph explain TARGET --to KUSTOMIZATION``: the plan for moving a component to another
Kustomization. What the move makes Flux apply and delete (``fluxgraph.gc``), in which order
(``fluxgraph.ordering``), which variables the new owner must provide, which dependents must
follow, and the merges to make, each safe on its own (``move_steps``). Pure functions over a
loaded model returning ``explain.MovePlan``.
"""

from __future__ import annotations

import posixpath
from typing import Any

from fluxgraph import envsubst, flux, gc, ordering
from fluxgraph.cluster import AppliedObject, ClusterModel, KustomizationNode, OpenVariables
from fluxgraph.explain import (
    MissingVariable,
    MoveObject,
    MovePlan,
    Need,
    Target,
    declaration_object,
    fields_from_parent,
    has_escape,
    ordered_objects,
    variable_views,
)
from fluxgraph.kustomize.build import KUSTOMIZATION_FILES


def _providers(model: ClusterModel, objs: list[AppliedObject]) -> list[tuple[str, str]]:
    """(Kustomization, what) that the objects need applied before them: the Namespaces they live
    in, the CRDs of their kinds, their HelmReleases' chart sources. These are existence needs, so
    a parent that applies them counts as ordered (``explain`` treats ancestors as covering them);
    variables are judged apart."""
    mine = {o.ref for o in objs}
    # prerequisites count in the cluster an object is applied to (ObjRef.target)
    ns_decl: dict[tuple[str, str], set[str]] = {}
    crd: dict[tuple[str, str, str], set[str]] = {}
    for o in model.objects():
        if o.ref in mine:
            continue
        if gc.is_namespace(o.ref):
            ns_decl.setdefault((o.ref.target, o.ref.name), set()).add(o.owner)
        elif gc.is_crd(o.ref):
            gk = gc.crd_kind(o.data)
            if gk:
                crd.setdefault((o.ref.target, *gk), set()).add(o.owner)
    out: set[tuple[str, str]] = set()
    for o in objs:
        if o.ref.namespace:
            for k in ns_decl.get((o.ref.target, o.ref.namespace), ()):
                out.add((k, f"Namespace {o.ref.namespace}"))
        for k in crd.get((o.ref.target, o.ref.group, o.ref.kind), ()):
            out.add((k, f"the CRD of {o.ref.kind}"))
        if gc.is_helmrelease(o.ref):
            hr = model.helm_releases.get(f"{o.ref.namespace}/{o.ref.name}")
            if hr is not None and hr.spec.chart_source is not None:
                src = model.sources.get(hr.spec.chart_source.id)
                if (
                    src is not None
                    and src.owner
                    and not any(
                        m.kind == src.kind and m.namespace == src.namespace and m.name == src.name
                        for m in mine
                    )
                ):
                    out.add((src.owner, f"{src.id} (chart of HelmRelease {hr.id})"))
    return sorted(out)


def _dependents_to_update(
    model: ClusterModel, objs: list[AppliedObject], old_owners: list[str]
) -> list[tuple[str, str]]:
    """Kustomizations that dependsOn an old owner for something the moved objects provide."""
    provides_ns = {o.ref.name for o in objs if gc.is_namespace(o.ref)}
    provides_crd = {gc.crd_kind(o.data) for o in objs if gc.is_crd(o.ref)}
    provides_cfg = {
        (o.ref.kind, o.ref.namespace, o.ref.name) for o in objs if o.ref.kind in ("ConfigMap", "Secret")
    }
    provides_src = {
        (o.ref.kind, o.ref.namespace, o.ref.name) for o in objs if o.ref.kind in flux.SOURCE_KINDS
    }
    out: list[tuple[str, str]] = []
    olds = set(old_owners)
    for ks in model.kustomizations.values():
        if ks.id in olds or not any(str(d) in olds for d in ks.spec.depends_on):
            continue
        why: set[str] = set()
        for o in ks.objects:
            if o.ref.namespace in provides_ns:
                why.add(f"Namespace {o.ref.namespace}")
            if (o.ref.group, o.ref.kind) in provides_crd:
                why.add(f"the CRD of {o.ref.kind}")
        if ks.spec.post_build is not None:
            for sf in ks.spec.post_build.substitute_from:
                if (sf.kind, ks.spec.namespace, sf.name) in provides_cfg:
                    why.add(f"substituteFrom {sf.kind}/{sf.name}")
        sref = ks.spec.source_ref
        if sref is not None and (sref.kind, sref.namespace, sref.name) in provides_src:
            why.add(f"sourceRef {sref.id}")
        if why:
            out.append((ks.id, ", ".join(sorted(why))))
    return sorted(out)


def _value_changes(
    model: ClusterModel, objs: list[AppliedObject], new_node: KustomizationNode | None
) -> list[tuple[str, str, str]]:
    """Variables the objects use that the new owner defines with another (known, not secret) value."""
    if new_node is None:
        return []
    out = []
    for v in variable_views(model, objs):
        for s in v.sources:
            if not s.substituted or v.name not in new_node.variables:
                continue
            old_val = model.kustomizations[s.owner].variables.get(v.name)
            new_val = new_node.variables.get(v.name)
            secret = str(s.origin or "").startswith("Secret/") or str(
                new_node.variable_origin.get(v.name, "")
            ).startswith("Secret/")
            if old_val is envsubst.UNKNOWN or new_val is envsubst.UNKNOWN or secret or old_val == new_val:
                continue
            out.append((v.name, str(old_val), str(new_val)))
    return sorted(set(out))


def _yaml_dep(ks_id: str, own_ns: str) -> str:
    ns, _, name = ks_id.partition("/")
    return f"{{name: {name}}}" if ns == own_ns else f"{{name: {name}, namespace: {ns}}}"


def plan_move(
    model: ClusterModel,
    target: Target,
    objs: list[AppliedObject],
    new_owner: str,
    new_path: str | None,
    cache: Any = None,
) -> MovePlan:
    """``cache``: the repository's ``FileCache``, to read the kustomization files above a moved
    folder (what they do to its objects is lost with the move)."""
    if "/" not in new_owner:
        ns = next(
            (model.kustomizations[o.owner].spec.namespace for o in objs), model.root_id.partition("/")[0]
        )
        new_owner = f"{ns}/{new_owner}"
    new_node = model.kustomizations.get(new_owner)
    exists = new_node is not None
    notes: list[str] = []
    if not exists and new_path is None and target.kind == "path" and not target.is_file:
        new_path = target.path
    moving = [o for o in objs if o.owner != new_owner]
    if len(moving) < len(objs):
        notes.append(f"{len(objs) - len(moving)} of the objects are applied by {new_owner} already")
    old_owners = sorted({o.owner for o in moving})
    new_ns = new_owner.partition("/")[0]

    # ordering facts for the verdicts
    objects: list[MoveObject] = []
    cascades: list[gc.Cascade] = []
    for o in ordered_objects(moving):
        old = model.kustomizations[o.owner]
        chain_ids = (
            ordering.revision_chain(model, old.id, new_owner) if old.id != new_owner else None
        )
        if (
            chain_ids is not None
            and new_node is not None
            and ordering.source_of(new_node.spec) != ordering.source_of(old.spec)
        ):
            chain_ids = None
        created_by_old = new_node is not None and gc.applied_by(model, new_owner, old.id)
        waits = new_node is not None and old.id in gc.transitive_depends(model, new_owner)
        j = gc.judge_move(
            o.data,
            gc.OldOwnerState(old.id, old.spec, None, chain_ids, None),
            gc.NewOwnerState(
                new_owner, exists, created_by_old, waits, bool(new_node and new_node.spec.suspend)
            ),
        )
        objects.append(MoveObject(o.ref, o.owner, j.verdict, j.reason, o.location))
        if j.verdict in (gc.RACE, gc.RECREATE):
            if gc.is_namespace(o.ref) and o.ref.name not in gc.IMMORTAL_NAMESPACES:
                cascades.append(gc.namespace_cascade(model, o.ref.name, o.ref.target))
            elif gc.is_crd(o.ref):
                cascades.append(gc.crd_cascade(model, o.data, o.ref.name, o.ref.target))
            elif gc.is_flux_ks(o.ref):
                child = model.kustomizations.get(gc.ks_id_of(o.ref))
                if child is not None and gc.finalizer_deletes(child.spec):
                    known = child.status == "built" and not child.incomplete
                    c = gc.Cascade(
                        f"Kustomization/{child.id}",
                        "kustomization",
                        note=f"its finalizer ({gc.deletion_policy_text(child.spec)}) deletes its inventory"
                        + (
                            ""
                            if known
                            else f", which fluxgraph does not know ({child.status}{', incomplete' if child.incomplete else ''}): "
                            "everything it applied in the cluster goes"
                        ),
                    )
                    c.victims = [(child.id, x.ref) for x in child.objects]
                    cascades.append(c)
            elif gc.is_helmrelease(o.ref):
                cascades.append(
                    gc.Cascade(
                        f"HelmRelease/{o.ref.namespace}/{o.ref.name}",
                        "helmrelease",
                        note="deleting a HelmRelease uninstalls the Helm release and everything the chart created",
                    )
                )

    # variables
    missing: list[MissingVariable] = []
    newly: list[str] = []
    new_vars: dict[str, Any] = new_node.variables if new_node is not None else {}
    new_substitutes = new_node is not None and new_node.spec.post_build is not None
    for v in variable_views(model, moving):
        substituted_before = any(s.substituted for s in v.sources)
        if not substituted_before:
            if new_substitutes:
                newly.append(v.name)
            continue
        provided = v.name in new_vars if new_node is not None else False
        if new_node is not None and isinstance(new_vars, OpenVariables) and v.name not in new_vars:
            provided = False  # unknown: it may come from a substituteFrom missing from the repository
        if not provided:
            src = next((s for s in v.sources if s.origin), None)
            missing.append(
                MissingVariable(
                    v.name, src.origin if src else None, src.provider if src else [], v.has_default
                )
            )
    escapes = []
    if not new_substitutes:
        escapes = [o.ref for o in moving if model.kustomizations[o.owner].substituted and has_escape(o)]

    # ordering needs of the moved objects
    needs: list[Need] = []
    new_deps = gc.transitive_depends(model, new_owner) if new_node is not None else {}
    new_anc = set(model.ancestors(new_owner)) if new_node is not None else set()
    for provider, what in _providers(model, moving):
        if provider == new_owner:
            continue
        covered = provider in new_deps or provider in new_anc
        if provider in old_owners:
            what += f", which stays in {provider}"
        needs.append(Need(provider, what, covered))
    for old_id in old_owners:
        for dep in model.kustomizations[old_id].spec.depends_on:
            d = str(dep)
            if d != new_owner and not any(n.provider == d for n in needs):
                needs.append(Need(d, f"{old_id} dependsOn it", d in new_deps))
    dependents = _dependents_to_update(model, moving, old_owners)
    moving_ids = {id(o) for o in moving}
    for old_id in old_owners:
        rest = [o for o in model.kustomizations[old_id].objects if id(o) not in moving_ids]
        if rest:
            eg = ", ".join(str(o.ref) for o in rest[:3])
            notes.append(f"{old_id} keeps {len(rest)} other object(s) (e.g. {eg}); they stay with it")
        else:
            notes.append(
                f"{old_id} applies nothing else: once the move is done, remove it (with prune still off, or its finalizer deletes what is labelled with it)"
            )
    for name, old_v, new_v in _value_changes(model, moving, new_node):
        notes.append(
            f"variable {name} is {old_v!r} in the old owner but {new_v!r} in {new_owner}: what uses it changes (names using it change identity)"
        )

    # build differences
    diffs: list[str] = []
    for old_id in old_owners:
        ospec = model.kustomizations[old_id].spec
        if new_node is None:
            # targetNamespace, decryption and commonMetadata the new Kustomization takes as the
            # old owner writes them (COPIED_FIELDS); only from the owner the plan copies
            main_old = copied_from(model, objects, old_owners)
            copied = main_old is not None and main_old.id == old_id
            if ospec.target_namespace and not copied:
                diffs.append(
                    f"{old_id} sets targetNamespace {ospec.target_namespace}: give {new_owner} the same, or the namespaced objects change identity"
                )
            if ospec.decryption and not copied and any(o.data.get("sops") for o in moving if o.ref.kind == "Secret"):
                diffs.append(
                    f"{old_id} decrypts SOPS (spec.decryption): the moved Secrets need it on {new_owner} too"
                )
            if ospec.name_prefix or ospec.name_suffix:
                diffs.append(
                    f"{old_id} sets namePrefix/nameSuffix: the names change unless {new_owner} sets the same"
                )
            if ospec.patches:
                diffs.append(
                    f"{old_id} has {len(ospec.patches)} spec.patches: check which apply to the moved objects"
                )
            if ospec.common_metadata and not copied:
                diffs.append(
                    f"{old_id} sets commonMetadata: labels/annotations change unless {new_owner} sets the same"
                )
            continue
        nspec = new_node.spec
        if ospec.target_namespace != nspec.target_namespace:
            diffs.append(
                f"targetNamespace: {old_id} {ospec.target_namespace or '(none)'}, {new_owner} {nspec.target_namespace or '(none)'}: the namespaced objects change identity, so the old ones are pruned, not moved"
            )
        if (ospec.name_prefix, ospec.name_suffix) != (nspec.name_prefix, nspec.name_suffix):
            diffs.append(
                "namePrefix/nameSuffix differ: the names change, so the old objects are pruned, not moved"
            )
        if bool(ospec.decryption) != bool(nspec.decryption):
            diffs.append(
                f"spec.decryption: {old_id} {'decrypts' if ospec.decryption else 'does not decrypt'}, {new_owner} {'decrypts' if nspec.decryption else 'does not'}"
            )
        if ordering.source_of(ospec) != ordering.source_of(nspec):
            diffs.append(
                f"sourceRef: {old_id} {ordering.source_of(ospec)}, {new_owner} {ordering.source_of(nspec)} (a dependsOn between them does not wait for the same revision)"
            )
        if ospec.common_metadata != nspec.common_metadata:
            diffs.append("commonMetadata differs: labels/annotations of the objects change")
        if len(ospec.patches) or len(nspec.patches):
            diffs.append(
                f"spec.patches: {old_id} has {len(ospec.patches)}, {new_owner} has {len(nspec.patches)}: check which apply to the moved objects"
            )
        if ospec.wait != nspec.wait or ospec.health_checks != nspec.health_checks:
            diffs.append(
                f"health: {old_id} wait={str(ospec.wait).lower()}, {new_owner} wait={str(nspec.wait).lower()}"
            )

    diffs.extend(_shaped_outside(model, target, moving, cache))

    plan = MovePlan(
        new_owner=new_owner,
        exists=exists,
        new_path=new_path if not exists else (new_node.build_dir if new_node else None),
        old_owners=old_owners,
        objects=objects,
        cascades=[c for c in cascades if c.victims or c.helm_releases or c.kind in ("helmrelease", "kustomization")],
        missing_variables=missing,
        escapes=escapes,
        newly_substituted=sorted(set(newly)),
        needs=needs,
        dependents=dependents,
        differences=diffs,
        steps=[],
        notes=notes,
    )
    plan.steps = move_steps(model, plan, target, moving, new_ns, _destination(cache, target, plan.new_path))
    return plan


# kustomization fields that change the objects of the resources it lists (kustomize's transformers)
SHAPING_KEYS = (
    "patches", "patchesStrategicMerge", "patchesJson6902", "namespace", "namePrefix", "nameSuffix", "commonLabels",
    "labels", "commonAnnotations", "images", "replicas", "replacements", "transformers", "vars", "components",
)


def _shapes(cache: Any, kfile: str) -> bool:
    """Whether the kustomization file ``kfile`` has a field that changes what it lists (unknown,
    without a file cache or where it cannot be read: taken as shaping)."""
    if cache is None or kfile.endswith("<generated>"):
        return cache is None
    docs, problems = cache.documents(kfile)  # reports what it cannot read instead of raising
    if problems and not docs:
        return True
    return any(isinstance(d.data, dict) and any(k in d.data for k in SHAPING_KEYS) for d in docs)


def _changed_beyond_copied(old: KustomizationNode, written: Any, built: dict[str, Any]) -> bool:
    """Whether the build changed the object beyond what a new Kustomization copying the old
    owner's targetNamespace and commonMetadata does again."""
    if written == built:
        return False
    if not isinstance(written, dict):
        return True
    from fluxgraph import contentdiff

    common = old.spec.common_metadata or {}
    keep = {f"metadata.{k}.{n}" for k in ("labels", "annotations") for n in (common.get(k) or {})}
    for c in contentdiff.object_changes(str(built.get("kind", "")), "", written, built):
        if c.path == "metadata.namespace" and old.spec.target_namespace:
            continue
        if c.path in keep or (c.path in ("metadata.labels", "metadata.annotations") and common.get(c.path.split(".")[1])):
            continue
        return True
    return False


def _shaped_outside(model: ClusterModel, target: Target, moving: list[AppliedObject], cache: Any = None) -> list[str]:
    """Moved objects that are not only files of the moved folder: those a component of the old
    owner's build contributes (its ``spec.components``, or a kustomization's ``components``
    above the folder), and those the build changes from what the file says (an overlay's
    patches, namespace, prefixes, labels, images: whatever a kustomization above the folder or
    the old owner's spec does) while a kustomization above the folder takes part. Moving the
    folder moves none of that: such objects are dropped or change."""
    if target.kind != "path" or target.path is None:
        return []
    from fluxgraph.explain import under

    out: list[str] = []
    from_component: list[str] = []
    shaped: dict[str, list[str]] = {}
    for o in moving:
        old = model.kustomizations[o.owner]
        origin = o.resource.origin
        comps = [c for c in old.spec.components if isinstance(c, str) and old.build_dir is not None]
        comp_dirs = [posixpath.normpath(posixpath.join(old.build_dir or "", c)) for c in comps]
        # a component the old owner's spec adds, or one a kustomization outside the folder
        # includes, stays behind; one the folder's own kustomization includes goes with it
        flux_component = any(under(origin.file, d) and not under(d, target.path) for d in comp_dirs)
        home_inside = origin.home is not None and under(origin.home, target.path)
        if flux_component or (not under(origin.file, target.path) and not home_inside):
            from_component.append(str(o.ref))
            continue
        doc = o.resource.doc
        if doc is None or not isinstance(doc.data, dict):
            continue
        listers = [*origin.via, *([origin.home] if origin.home else [])]
        outside = [k for k in dict.fromkeys(listers) if not under(k, target.path) and _shapes(cache, k)]
        # the old owner's spec shapes the objects through what it writes itself and a new
        # Kustomization does not copy: its patches, images, name prefix and suffix. Its
        # targetNamespace and commonMetadata are copied (COPIED_FIELDS, or compared with an
        # existing owner's among the differences), and what a parent's patches set reaches a
        # new Kustomization beside it too (a note names those that select it by name)
        decl = declaration_object(model, old.id)
        doc_spec = decl.resource.doc.data.get("spec") if decl is not None and decl.resource.doc is not None and isinstance(decl.resource.doc.data, dict) else None
        written = doc_spec if isinstance(doc_spec, dict) else old.spec.spec
        spec_overlay = any(written.get(key) for key in ("patches", "images", "namePrefix", "nameSuffix"))
        if _changed_beyond_copied(old, doc.data, o.pre_substitution) and (outside or spec_overlay):
            shapers = [*outside, *([f"{old.id}'s spec"] if spec_overlay else [])]
            shaped.setdefault(", ".join(shapers), []).append(str(o.ref))
    if from_component:
        out.append(
            f"not files of {target.path}: {', '.join(from_component[:8])}{' ...' if len(from_component) > 8 else ''} "
            "come from a component of the old owner's build; moving the folder does not move them (they stay, or "
            "go with the old owner)"
        )
    for by, refs in sorted(shaped.items()):
        out.append(
            f"shaped by the build around {target.path} ({by}): {', '.join(refs[:8])}{' ...' if len(refs) > 8 else ''} "
            "differ from their files; moved out of that build they lose what it does (patches, namespace, names, "
            "labels): give the new owner the same, or check the diff after the move"
        )
    return out


def _destination(cache: Any, target: Target, new_path: str | None) -> dict[str, Any]:
    """Whether ``new_path/<target's name>`` exists already, and the kustomization file of
    ``new_path`` that must list it (None: Flux generates one, which takes every file)."""
    if cache is None or not new_path or target.kind != "path" or not target.path:
        return {}
    fs = cache.fs
    dest = posixpath.join(new_path, posixpath.basename(target.path))
    kfile = next((posixpath.join(new_path, n) for n in KUSTOMIZATION_FILES if fs.is_file(posixpath.join(new_path, n))), None)
    return {"exists": fs.exists(dest), "kustomization": kfile}


def target_lister(origin: Any, path: str) -> str | None:
    """The kustomization file that lists the folder or file ``path`` a resource was reached
    through: of the kustomizations the build entered to reach it (``origin.via``, outermost
    first) and the one that lists its file (``origin.home``), the innermost outside ``path``
    (the folder's own kustomization, and those below it, go with it)."""
    from fluxgraph.explain import under

    outside = [k for k in [*origin.via, *([origin.home] if origin.home else [])] if not under(k, path)]
    return outside[-1] if outside else None


def copied_from(model: ClusterModel, objects: list[MoveObject], old_owners: list[str]) -> KustomizationNode | None:
    """The old owner a new Kustomization takes its spec from: the one most objects leave, the
    outermost on a tie."""
    counts: dict[str, int] = {}
    for mo in objects:
        counts[mo.old_owner] = counts.get(mo.old_owner, 0) + 1
    main_old = max(old_owners, key=lambda k: (counts.get(k, 0), -len(model.ancestors(k))), default=None)
    return model.kustomizations[main_old] if main_old else None


def new_owner_inputs(
    model: ClusterModel, plan: MovePlan
) -> tuple[KustomizationNode | None, list[str], list[str], list[str], list[str]]:
    """What a new Kustomization of the plan is made from: the old owner it takes its spec from
    (the one most objects leave, the outermost on a tie), the substituteFrom objects in its
    namespace and elsewhere (``Kind/namespace/name``), the inline variables, its dependsOn."""
    old0 = copied_from(model, plan.objects, plan.old_owners)
    new_ns = plan.new_owner.partition("/")[0]
    sf = sorted({m.origin for m in plan.missing_variables if m.origin and m.origin.startswith(("ConfigMap/", "Secret/"))})
    inline = sorted({m.name for m in plan.missing_variables if m.origin == "substitute"})
    here = [x for x in sf if x.split("/")[1] == new_ns]
    elsewhere = [x for x in sf if x.split("/")[1] != new_ns]
    deps = sorted({n.provider for n in plan.needs})
    return old0, here, elsewhere, inline, deps


def new_kustomization(model: ClusterModel, plan: MovePlan) -> dict[str, Any] | None:
    """The Flux Kustomization a plan with a new owner adds, as data (the step says the same in
    words); None where the plan cannot write one (no old owner, a path outside the source, a
    substituteFrom object in another namespace, a variable without a source)."""
    old0, here, elsewhere, inline, deps = new_owner_inputs(model, plan)
    if old0 is None or old0.spec.source_ref is None or not plan.new_path or elsewhere:
        return None
    if any(not m.origin for m in plan.missing_variables):
        return None
    src = model.sources.get(old0.spec.source_ref.id)
    rel = src.spec_path_for(plan.new_path) if src is not None else plan.new_path
    if rel is None:
        return None
    ns, _, name = plan.new_owner.partition("/")
    raw = old0.spec.spec
    spec: dict[str, Any] = {"interval": raw.get("interval") or "10m", "path": f"./{rel}", "prune": True}
    sref = {"kind": old0.spec.source_ref.kind, "name": old0.spec.source_ref.name}
    if old0.spec.source_ref.namespace != ns:
        sref["namespace"] = old0.spec.source_ref.namespace
    spec["sourceRef"] = sref
    for key in COPIED_FIELDS:
        if key != "interval" and raw.get(key) not in (None, False):
            spec[key] = raw[key]
    post: dict[str, Any] = {}
    if here:
        post["substituteFrom"] = [{"kind": x.split("/")[0], "name": x.split("/")[2]} for x in here]
    if inline:
        values = dict(old0.spec.post_build.substitute) if old0.spec.post_build is not None else {}
        post["substitute"] = {k: values.get(k, "") for k in inline}
    if post:
        spec["postBuild"] = post
    if deps:
        spec["dependsOn"] = [
            {"name": d.partition("/")[2]} if d.partition("/")[0] == ns else {"name": d.partition("/")[2], "namespace": d.partition("/")[0]}
            for d in deps
        ]
    return {
        "apiVersion": old0.spec.api_version,  # what the cluster's Flux serves, as the old owner
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def _cannot_wait_for(model: ClusterModel, plan: MovePlan, old_id: str) -> str | None:
    """Why ``old_id`` cannot ``dependsOn`` the new owner: a cycle (the new owner is ordered after
    it already, by ``dependsOn`` or because it applies the new owner) or different sources."""
    new = plan.new_owner
    old = model.kustomizations[old_id]
    if plan.exists:
        before = ordering.happens_before(model, new)
        if old_id in before:
            how = "applies it" if old_id in model.ancestors(new) else "is ordered before it (dependsOn)"
            return f"{old_id} {how}, so that dependsOn would close a cycle"
        if ordering.source_of(model.kustomizations[new].spec) != ordering.source_of(old.spec):
            return "they use different sources, so the dependsOn would not wait for the same revision"
        return None
    for d in {n.provider for n in plan.needs}:
        if d == old_id or old_id in ordering.happens_before(model, d):
            return f"{new} must wait for {d}, which is {old_id} or ordered after it, so that dependsOn would close a cycle"
    return None


def _new_path(model: ClusterModel, old0: KustomizationNode | None, new_path: str | None) -> str:
    """``path:`` of the new Kustomization: relative to the root of what its source copies (the
    repository root for a GitRepository of it, a folder of it for an artifact built from one)."""
    if not new_path:
        return "path: <the new folder>"
    src = model.sources.get(old0.spec.source_ref.id) if old0 is not None and old0.spec.source_ref is not None else None
    if src is None:
        return f"path: ./{new_path}"
    rel = src.spec_path_for(new_path)
    if rel is None:
        return f"path: ./{new_path} (not in what {src.id} copies: the new Kustomization needs a source that holds it)"
    return f"path: ./{rel}" if rel else "path: ./"


# spec fields of the old owner the new Kustomization takes as they are written (interval is
# required; the others change how the objects are applied, decrypted or waited for, and
# commonMetadata what labels and annotations they get)
COPIED_FIELDS = (
    "interval", "retryInterval", "timeout", "serviceAccountName", "decryption", "wait", "force", "kubeConfig",
    "targetNamespace", "commonMetadata",
)


def _copied_spec(old0: KustomizationNode) -> list[str]:
    import json

    raw = old0.spec.spec
    out = [f"apiVersion: {old0.spec.api_version}", f"sourceRef: {ordering.source_of(old0.spec)}", "prune: true"]
    if raw.get("interval") is None:
        out.append("interval: 10m (required; " + old0.id + " has none as written)")
    for key in COPIED_FIELDS:
        v = raw.get(key)
        if v is None or v is False:
            continue
        out.append(f"{key}: {v if isinstance(v, str) else json.dumps(v, separators=(', ', ': '))}")
    if old0.spec.components:
        out.append(
            f"components: {old0.id} applies {', '.join(old0.spec.components)} to its build; give the new one those that "
            "shape the moved objects"
        )
    return out


def move_steps(
    model: ClusterModel,
    plan: MovePlan,
    target: Target,
    moving: list[AppliedObject],
    new_ns: str,
    dest_state: dict[str, Any] | None = None,
) -> list[str]:
    """The safe procedure, after the Flux FAQ: protect, move, verify, restore. ``dest_state``:
    what the repository holds where the target would go (``_destination``)."""
    dest_state = dest_state or {}
    steps: list[str] = []
    new = plan.new_owner
    new_node = model.kustomizations.get(new)
    # what applies the new owner: itself and its parents, or, for a new one declared beside the
    # old owner, what applies the old owner's declaration (the root applies its own)
    if new_node is not None:
        appliers = {new, *model.ancestors(new)}
    else:
        first = copied_from(model, plan.objects, plan.old_owners)
        up = (first.parent or first.id) if first is not None else None
        appliers = {up, *model.ancestors(up)} if up else set()
    selves = sorted(gc.ks_id_of(o.ref) for o in moving if gc.is_flux_ks(o.ref) and gc.ks_id_of(o.ref) in appliers)
    if selves:
        plan.blocked.append(
            f"the target holds Kustomization {', '.join(selves)}, which applies {new} (or is it): moved into {new}, "
            "it would apply what applies it, and the old owner would prune it"
        )
        return []
    if new_node is not None and new_node.status != "built":
        problem = next((p.message for p in new_node.problems if not p.not_evaluated), new_node.status)
        plan.blocked.append(
            f"{new} does not build at this revision ({new_node.status}: {problem}): what moves into it would not be "
            f"applied, and its old owner would prune it. Make {new} build first."
        )
        return []
    new_ns_, _, new_name = new.partition("/")
    pruning = [o for o in plan.old_owners if gc.prunes_now(model.kustomizations[o].spec)]
    unsafe = any(m.verdict in (gc.RACE, gc.RECREATE) for m in plan.objects)
    what = target.describe()
    for old_id in pruning:
        old = model.kustomizations[old_id]
        where = f" ({old.declared_at.file_line})" if old.declared_at else ""
        from_parent = fields_from_parent(model, old_id)
        parent_set = "prune" in from_parent
        how = (
            f"prune is set by the patches of {old.parent}, so override it there"
            if parent_set
            else "set `prune: false` on it"
        )
        if not unsafe:
            continue
        parent = old.parent or old_id
        verify = f"`flux export ks {old_id.partition('/')[2]} -n {old_id.partition('/')[0]} | grep prune`"
        annotate = (
            f"(Alternative: annotate the objects that move with `kustomize.toolkit.fluxcd.io/prune: disabled` and let "
            f"{old_id} apply that first.)"
        )
        # the old owner's current spec waits for the Kustomization that applies it: a change of its
        # own spec is in force before it reconciles the revision that carries it (gc.spec_carrier)
        carrier = gc.spec_carrier(model, model, old_id)
        if carrier is not None and not parent_set:
            steps.append(
                f"Disable garbage collection on {old_id}{where}: {how}. This can be part of the commit that moves "
                f"the objects: {carrier.describe()}, so it starts that revision only after {carrier.parent} has "
                f"applied it, and with it `prune: false` (kustomize-controller checkDependencies). Verify after the "
                f"merge with {verify}. {annotate}"
            )
        else:
            why = (
                f" (the patches are {carrier.parent}'s own spec: {carrier.parent} may apply the next revision with its "
                f"previous patches, so {old_id} waiting for it does not help)"
                if carrier is not None
                else ""
            )
            steps.append(
                f"Disable garbage collection on {old_id}{where}: {how}. Merge this on its own{why} and let it apply "
                f"(`flux reconcile ks {parent.partition('/')[2]} -n {parent.partition('/')[0]} --with-source`); verify with "
                f"{verify}. {annotate}"
            )
        back = [n.what for n in plan.needs if n.provider == old_id]
        if back:
            plan.notes.append(
                f"{new} needs {'; '.join(back)}: it must dependsOn {old_id}, so {old_id} cannot dependsOn {new} "
                "(a cycle): disable pruning instead"
            )
        elif (why_not := _cannot_wait_for(model, plan, old_id)) is not None:
            plan.notes.append(f"{old_id} cannot dependsOn {new} instead of disabling pruning: {why_not}")
        else:
            when = (
                "in the commit that moves the objects (its current spec waits for "
                f"{carrier.parent}, so the new dependsOn is in force when it reconciles the move) or before it"
                if carrier is not None and "dependsOn" not in from_parent
                else "in a merge before the move"
            )
            plan.alternatives.append(
                (
                    len(steps),
                    f"make {old_id} wait for {new}: add `dependsOn: [{_yaml_dep(new, old.spec.namespace)}]` "
                    f"to {old_id}{where} {when} ({old_id} stays blocked until {new} exists and is Ready); "
                    f"both use the same source ({ordering.source_of(old.spec)}).",
                )
            )
    if not plan.exists:
        old0, here, elsewhere, inline, deps = new_owner_inputs(model, plan)
        spec_bits = [_new_path(model, old0, plan.new_path)]
        if old0 is not None:
            spec_bits.extend(_copied_spec(old0))
        if here:
            spec_bits.append(
                "postBuild.substituteFrom: "
                + ", ".join(f"{{kind: {x.split('/')[0]}, name: {x.split('/')[2]}}}" for x in here)
            )
        if elsewhere:
            spec_bits.append(
                "the variables of "
                + ", ".join(elsewhere)
                + f" (substituteFrom only reads the Kustomization's own namespace, {new_ns_}: copy them there or declare it in that namespace)"
            )
        if inline:
            spec_bits.append("postBuild.substitute: " + ", ".join(inline) + " (values as in the old owner)")
        if deps:
            spec_bits.append("dependsOn: " + ", ".join(_yaml_dep(d, new_ns_) for d in deps))
        decl_hint = ""
        if old0 is not None and old0.declared_at is not None:
            decl_hint = (
                f" next to {old0.id}'s declaration ({old0.declared_at.file}), not inside {old0.id}'s own path"
            )
        steps.append(f"Add Kustomization {new}{decl_hint}: " + "; ".join(spec_bits) + ".")
    else:
        node = model.kustomizations[new]
        sf = sorted(
            {
                m.origin
                for m in plan.missing_variables
                if m.origin and m.origin.startswith(("ConfigMap/", "Secret/"))
            }
        )
        if sf:
            steps.append(f"Add to {new}'s postBuild.substituteFrom: " + ", ".join(sf) + ".")
        inline = sorted({m.name for m in plan.missing_variables if m.origin == "substitute"})
        if inline:
            steps.append(f"Add to {new}'s postBuild.substitute: " + ", ".join(inline) + ".")
        other = [m.name for m in plan.missing_variables if not m.origin]
        if other:
            steps.append(
                f"Define for {new} (no source found in the old owner either): " + ", ".join(other) + "."
            )
        missing_deps = sorted({n.provider for n in plan.needs if not n.covered})
        if missing_deps:
            steps.append(
                f"Add to {new}'s dependsOn{_at(model, new)}: "
                + ", ".join(_yaml_dep(d, node.spec.namespace) for d in missing_deps)
                + "."
            )
    if plan.escapes:
        steps.append(
            f"{new} has no postBuild, so `$${{...}}` escapes in {', '.join(str(r) for r in plan.escapes[:3])} would reach the cluster doubled: "
            "write them as `${...}` or give it a postBuild."
        )
    if plan.newly_substituted:
        steps.append(
            f"{new} substitutes, the old owner did not: escape as `$${{...}}` what must stay literal: {', '.join(plan.newly_substituted)}."
        )
    for dep, why in plan.dependents:
        steps.append(f"Make {dep}{_at(model, dep)} dependsOn {new} (it uses {why}, which moves).")
    moved = {(o.ref.kind, o.ref.namespace, o.ref.name) for o in moving}
    for old_id in plan.old_owners:
        old = model.kustomizations[old_id]
        for i, hc in enumerate(old.spec.health_checks):
            key = (hc.get("kind"), hc.get("namespace") or "", hc.get("name"))
            if key in moved:
                where = f" ({old.declared_at.file})" if old.declared_at else ""
                steps.append(
                    f"Remove spec.healthChecks[{i}] ({key[0]} {key[1]}/{key[2]}) from {old_id}{where} in the commit that moves "
                    f"it: {old_id} would keep waiting for an object {new} applies"
                    + (f", and {new} waits for {old_id} (a deadlock on a new cluster)" if old_id in gc.transitive_depends(model, new) else "")
                    + "."
                )
    for old_id in plan.old_owners:
        rest = [o for o in model.kustomizations[old_id].objects if o.ref not in {m.ref for m in plan.objects}]
        if rest:
            continue
        waiting = sorted(k for k, n in model.kustomizations.items() if any(str(d) == old_id for d in n.spec.depends_on))
        if waiting:
            plan.notes.append(
                f"{len(waiting)} Kustomization(s) dependsOn {old_id}, which applies nothing once the move is done: before "
                f"removing it, point their dependsOn at {new} or drop the entry, or they wait for it forever "
                f"(dependency not found): {', '.join(waiting[:20])}{' ...' if len(waiting) > 20 else ''}"
            )
    if target.kind == "path" and plan.new_path == target.path:
        origin = moving[0].resource.origin if moving else None
        lister = None if origin is None else target_lister(origin, target.path or "")
        if lister and not lister.endswith("<generated>"):
            how = f"remove it from {lister}"
        else:
            how = f"move it out of the folder {', '.join(plan.old_owners)} builds (a generated kustomization lists every file below it)"
        steps.append(
            f"Stop including {target.path} in the build of {', '.join(plan.old_owners)} ({how}) so that only {new} applies it; merge."
        )
    elif plan.new_path and target.kind == "path" and target.path and plan.new_path != target.path:
        name = posixpath.basename(target.path)
        dest = posixpath.join(plan.new_path, name)
        if dest_state.get("exists"):
            plan.blocked.append(
                f"{dest} exists already: moving {what} into {plan.new_path} would mix its files with those there; "
                "choose another folder with --to-path"
            )
            return []
        kfile = dest_state.get("kustomization")
        listed = (
            f"and add `- {name}` to the resources of {kfile} (it lists what {new} builds)"
            if kfile
            else f"({plan.new_path} has no kustomization file: Flux's generated one takes every folder below it)"
        )
        steps.append(f"Move {what} to {dest} {listed}, so that {new} applies it; merge.")
    else:
        steps.append(f"Move {what} so that {new} applies it; merge.")
    steps.append(
        f"`flux reconcile ks {new_name} -n {new_ns_} --with-source`, then `flux get ks {new_name} -n {new_ns_}` (Ready) and "
        f"`flux tree ks {new_name} -n {new_ns_}` (the objects are listed under it)."
    )
    for old_id in plan.old_owners:
        n, _, nm = old_id.partition("/")
        steps.append(
            f"`flux reconcile ks {nm} -n {n}` and `flux tree ks {nm} -n {n}`: the objects are no longer listed under it."
        )
    if unsafe:
        steps.append(
            "Restore `prune: true` on " + ", ".join(f"{o}{_at(model, o)}" for o in pruning) + " (or remove the temporary annotation); merge."
        )
    for old_id in plan.old_owners:
        patched = [f for f in fields_from_parent(model, old_id) if f not in ("prune",)]
        up = model.kustomizations[old_id].parent
        if patched and up and not plan.exists:
            plan.notes.append(
                f"the patches of {up} set {', '.join(patched)} of {old_id}: one whose target selects {old_id} by name "
                f"does not reach {new}; give {new} what it needs of them, or widen the target"
            )
    return steps


def _at(model: ClusterModel, ks_id: str) -> str:
    """`` (file:line)`` where the Kustomization is declared, for a step that edits it."""
    node = model.kustomizations.get(ks_id)
    return f" ({node.declared_at.file_line})" if node is not None and node.declared_at is not None else ""


