"""Shared reading of postBuild substitution for the substitution rules (GitHub issue 3).

Every ``${...}`` that Flux substitutes in an object is classified exactly once, so that the
rules never report the same token twice:

* ``shell``      inside a shell script (container ``command``/``args`` run by ``sh -c``, exec
                 hooks and probes, ``#!`` scripts, ``*.sh`` ConfigMap keys, ``script:`` of a step
                 with an ``image``) -> ``unescaped-shell-variable``;
* ``child``      inside a child Flux Kustomization's ``spec`` and naming a variable that child
                 defines itself, which the parent does not -> ``child-variable-substituted-by-parent``;
* ``foreign``    text evidently written for another tool (a Grafana dashboard, a
                 CustomResourceDefinition, a name Flux cannot define) -> ``unintended-substitution``;
* ``plain``      everything else -> ``undefined-substitution-variable`` when no source defines it.

Flux runs envsubst over the whole YAML of an object (fluxcd/pkg ``kustomize/kustomize_varsub.go``);
the model (``fluxgraph.substitution``) does it scalar by scalar, and so does this module: the
strings are those of ``AppliedObject.pre_substitution`` (mapping keys are not looked at).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

from fluxgraph import envsubst, flux
from fluxgraph.checks._memo import per_cluster, per_object
from fluxgraph.cluster import AppliedObject, ClusterModel, KustomizationNode, OpenVariables
from fluxgraph.model import Location, as_dict, linked_path, value_at
from fluxgraph.model import dotted as dotted
from fluxgraph.model import string_values as strings
from fluxgraph.ownership import Producer as Producer  # re-exported for the rules
from fluxgraph.ownership import producers as producers  # re-exported for the rules
from fluxgraph.shell import parse_exec
from fluxgraph.substitution import substitution_disabled

if TYPE_CHECKING:
    from fluxgraph.envsubst import Template, VarRef

Path = tuple[Any, ...]

SHELL_NAMES = frozenset({"sh", "bash", "ash", "dash", "zsh", "ksh", "mksh", "busybox"})
_SHEBANG_RE = re.compile(r"#![ \t]*(?:/\S*/)?(?:env[ \t]+(?:-\S+[ \t]+)*)?(\S+)")
FLUX_GROUPS = frozenset(
    {
        flux.KUSTOMIZE_GROUP,
        flux.HELM_GROUP,
        flux.SOURCE_GROUP,
        flux.SOURCE_EXT_GROUP,
        "notification.toolkit.fluxcd.io",
        "image.toolkit.fluxcd.io",
    }
)
# Fields of a Flux Kustomization that kustomize-controller writes into the kustomization file
# before the build (fluxcd/pkg kustomize/kustomize_generator.go): their text ends up in the
# built objects and is substituted there by that Kustomization's own postBuild.
SELF_EVALUATED_KS_FIELDS = frozenset(
    {"patches", "images", "namePrefix", "nameSuffix", "targetNamespace", "components"}
)


# -- small helpers ------------------------------------------------------------------------


def object_strings(obj: AppliedObject, contains: str) -> list[tuple[Path, str]]:
    """``strings(obj.pre_substitution, contains=...)`` for a needle with a ``$`` in it, from the
    object's strings with a ``$`` (walked once per object, however many checks ask)."""
    assert "$" in contains
    return [(p, s) for p, s in obj.dollar_strings() if contains in s]




def parse(text: str) -> Template | None:
    if "${" not in text:
        return None
    try:
        return envsubst.parse(text)
    except envsubst.EnvsubstSyntaxError:
        return None


def short(text: str, limit: int = 80) -> str:
    one = text.replace("\n", "\\n")
    return one if len(one) <= limit else one[: limit - 1] + "…"


def quote(text: str) -> str:
    """A value as a double-quoted string (JSON escaping), for messages."""
    return json.dumps(text, ensure_ascii=False)


def line_around(text: str, offset: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, (len(text) if end == -1 else end)


# -- positions ----------------------------------------------------------------------------


def _find_string(node: Any, value: str, path: Path = ()) -> Path | None:
    for p, s in strings(node, path, value):
        if s == value:
            return p
    return None


def text_location(obj: AppliedObject, path: Path, offset: int) -> Location:
    """Where character ``offset`` of the string at ``path`` of ``obj.pre_substitution`` is in the
    source file (the string is looked up in the source document when a patch moved it)."""
    r = obj.resource
    doc = r.doc
    text = value_at(obj.pre_substitution, path)
    if doc is None or not isinstance(text, str):
        return r.position(path)
    node = doc.scalar_node(path)
    if node is None or node.value != text:
        other = _find_string(doc.data, text)
        if other is None:
            return r.position(path)
        path = other
    line, col = doc.text_position(path, offset)
    return Location(r.origin.file, line, col)


def field_location(obj: AppliedObject | None, path: Path, fallback: Location) -> Location:
    if obj is None:
        return fallback
    return obj.resource.position(path)


# -- shell scripts ------------------------------------------------------------------------


def _as_list(v: Any) -> list[Any] | None:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list):
        return v
    return None


def is_shell_script_text(text: str) -> bool:
    """A ``#!`` script run by a POSIX-style shell."""
    if not text.startswith("#!"):
        return False
    m = _SHEBANG_RE.match(text)
    return m is not None and m.group(1).rsplit("/", 1)[-1] in SHELL_NAMES


def shell_scripts(data: Any) -> dict[Path, str]:
    """Paths of the strings of ``data`` that a shell runs as a script -> what they are.

    Iterative, in document order (a container's ``command``/``args`` are judged before the
    strings below them); paths are built only for what is kept."""
    out: dict[Path, str] = {}
    stack: list[tuple[Any, Any]] = [(None, data)]  # (where, node); where = (parent where, key)
    while stack:
        where, node = stack.pop()
        t = type(node)
        if t is dict or (t is not list and t is not str and isinstance(node, dict)):
            cmd, args = node.get("command"), node.get("args")
            if cmd is not None or args is not None:
                cl, al = _as_list(cmd), _as_list(args)
                if cl is not None or al is not None:
                    combined = (cl or []) + (al or [])
                    pe = parse_exec(combined)
                    if pe is not None:
                        path = linked_path(where)
                        n = len(cl or [])
                        if pe.index < n:
                            p = (*path, "command", pe.index) if isinstance(cmd, list) else (*path, "command")
                        else:
                            p = (*path, "args", pe.index - n) if isinstance(args, list) else (*path, "args")
                        out[p] = f"the {pe.shell} -c script at {dotted(p)}"
            if "image" in node and isinstance(node.get("script"), str):
                p = (*linked_path(where), "script")
                out[p] = f"the step script at {dotted(p)}"
            stack.extend(((where, k), v) for k, v in reversed(node.items()))
        elif t is list or (t is not str and isinstance(node, list)):
            stack.extend(((where, i), node[i]) for i in range(len(node) - 1, -1, -1))
        elif isinstance(node, str) and node.startswith("#!") and is_shell_script_text(node):
            path = linked_path(where)
            if path not in out:
                out[path] = f"the shell script at {dotted(path)}"
    if data.get("kind") == "ConfigMap" and isinstance(data.get("data"), dict):
        for k, v in data["data"].items():
            if isinstance(v, str) and str(k).endswith((".sh", ".bash")):
                out.setdefault(("data", k), f"the script {k} of the ConfigMap")
    return out


@per_object
def scripts_of(obj: AppliedObject) -> dict[Path, str]:
    """``shell_scripts`` of the object before substitution, once per object's content (callers
    must not modify the dict)."""
    return shell_scripts(obj.pre_substitution)


# -- foreign text -------------------------------------------------------------------------


def is_grafana_dashboard(obj: AppliedObject, path: Path, text: str) -> bool:
    data = obj.pre_substitution
    if obj.ref.kind in ("GrafanaDashboard", "GrafanaLibraryPanel"):
        return True
    labels = as_dict(as_dict(data.get("metadata")).get("labels"))
    if obj.ref.kind == "ConfigMap" and any(str(k).startswith("grafana_dashboard") for k in labels):
        return True
    if _dashboard_json(text):
        return True
    return obj.ref.kind == "HelmRelease" and "dashboards" in path


@lru_cache(maxsize=1024)
def _dashboard_json(text: str) -> bool:
    """Grafana dashboard JSON markers; cached per string, which every ``${...}`` token of a
    large text asks about again (a str caches its hash, so a hit is O(1))."""
    return '"panels"' in text and ('"datasource"' in text or '"templating"' in text or '"__inputs"' in text)


def foreign_reason(obj: AppliedObject, path: Path, text: str, name: str) -> str | None:
    """Why ``${name}`` at ``path`` is evidently not written for Flux, or None."""
    if not envsubst.is_valid_var_name(name):
        return f"{name!r} can never be a Flux variable name"
    if obj.ref.kind == "CustomResourceDefinition":
        return "it is text of a CustomResourceDefinition"
    if is_grafana_dashboard(obj, path, text):
        return "it is a Grafana dashboard variable"
    return None


# -- Flux-controlled fields ---------------------------------------------------------------


def flux_field(obj: AppliedObject, path: Path) -> bool:
    """Whether ``path`` is a field that a Flux controller reads itself (no tool expands
    ``${...}`` there), e.g. a child Kustomization's ``spec.path`` or a chart version."""
    if obj.ref.group not in FLUX_GROUPS or len(path) < 2 or path[0] != "spec":
        return False
    if obj.ref.kind == "HelmRelease" and path[1] in ("values", "postRenderers"):
        return False
    return not (obj.ref.kind == "Kustomization" and path[1] in SELF_EVALUATED_KS_FIELDS)


def self_evaluated(obj: AppliedObject, path: Path) -> bool:
    """A Flux Kustomization's field written into its kustomization file before the build:
    ``${...}`` there is substituted by that Kustomization's own postBuild."""
    return (
        obj.ref.group == flux.KUSTOMIZE_GROUP
        and obj.ref.kind == "Kustomization"
        and len(path) >= 2
        and path[0] == "spec"
        and path[1] in SELF_EVALUATED_KS_FIELDS
    )


# -- variables ----------------------------------------------------------------------------


def is_open(ks: KustomizationNode) -> bool:
    return isinstance(ks.variables, OpenVariables)


def provided(ks: KustomizationNode, name: str) -> bool | None:
    """True: a source of ``ks`` defines ``name``; False: none does; None: unknown (a
    substituteFrom object is not in the repository)."""
    if name in ks.variables.keys():
        return True
    return None if is_open(ks) else False


def sources_text(ks: KustomizationNode) -> str:
    pb = ks.spec.post_build
    parts: list[str] = []
    if pb is not None:
        parts.extend(
            f"{sf.kind}/{ks.spec.namespace}/{sf.name}" + (" (optional)" if sf.optional else "")
            for sf in pb.substitute_from
        )
        if pb.substitute:
            parts.append("postBuild.substitute")
    return ", ".join(parts) if parts else "no variable source"


def cluster_variables(cluster: ClusterModel) -> dict[str, list[tuple[str, str]]]:
    """Variable name -> [(Kustomization id, origin)] over the substituting Kustomizations."""
    out: dict[str, list[tuple[str, str]]] = {}
    for ks in cluster.kustomizations.values():
        if ks.spec.post_build is None:
            continue
        for name in ks.variables.keys():
            out.setdefault(name, []).append((ks.id, ks.variable_origin.get(name, "postBuild")))
    return out


def child_node(cluster: ClusterModel, obj: AppliedObject) -> KustomizationNode | None:
    if obj.ref.kind != "Kustomization" or obj.ref.group != flux.KUSTOMIZE_GROUP:
        return None
    ns = obj.ref.namespace or as_str_ns(obj)
    return cluster.kustomizations.get(f"{ns}/{obj.ref.name}")


def as_str_ns(obj: AppliedObject) -> str:
    v = as_dict(obj.data.get("metadata")).get("namespace")
    return v if isinstance(v, str) else ""


def child_own_names(cluster: ClusterModel, obj: AppliedObject) -> set[str]:
    """Names a child Flux Kustomization object defines for its own substitution: the keys of
    its ``postBuild.substitute`` (as written) and of its substituteFrom objects (from the model)."""
    names: set[str] = set()
    pb = as_dict(as_dict(obj.pre_substitution.get("spec")).get("postBuild"))
    names.update(str(k) for k in as_dict(pb.get("substitute")))
    child = child_node(cluster, obj)
    if child is not None:
        names.update(
            k for k, origin in child.variable_origin.items() if origin not in ("substitute", "command line")
        )
    return names


# -- the classification -------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    """One ``${...}`` in a string of an object that Flux substitutes."""

    ks: KustomizationNode
    obj: AppliedObject
    path: Path
    text: str  # the whole string, before substitution
    ref: VarRef
    category: str  # shell | child | foreign | plain
    why: str  # the shell script / the foreign reason / ""

    @property
    def expr(self) -> str:
        return self.text[self.ref.start : self.ref.end]

    @property
    def location(self) -> Location:
        return text_location(self.obj, self.path, self.ref.start)

    @property
    def subject(self) -> str:
        return f"{self.ks.id}|{self.obj.ref}|{dotted(self.path)}|{self.expr}"


def substituted_objects(cluster: ClusterModel) -> Iterator[tuple[KustomizationNode, AppliedObject]]:
    for ks in cluster.kustomizations.values():
        if not ks.substituted:
            continue
        for obj in ks.objects:
            if obj.substitution == "applied":
                yield ks, obj


@per_cluster
def tokens(cluster: ClusterModel) -> list[Token]:
    """Every ``${...}`` (outermost expressions and their nested ones) in the objects that Flux
    substitutes, classified (see the module doc). Cached per cluster model."""
    out: list[Token] = []
    for ks, obj in substituted_objects(cluster):
        scripts: dict[Path, str] | None = None
        own: set[str] | None = None
        for path, text in object_strings(obj, "${"):
            t = parse(text)
            if t is None:
                continue
            if scripts is None:
                scripts = scripts_of(obj)
            for ref in t.refs():
                category, why = "plain", ""
                if path in scripts:
                    category, why = "shell", scripts[path]
                elif (
                    obj.ref.kind == "Kustomization"
                    and obj.ref.group == flux.KUSTOMIZE_GROUP
                    and path[:1] == ("spec",)
                ):
                    if own is None:
                        own = child_own_names(cluster, obj)
                    if ref.name in own and provided(ks, ref.name) is False:  # ks: the parent
                        category = "child"
                if category == "plain":
                    reason = foreign_reason(obj, path, text, ref.name)
                    if reason is not None:
                        category, why = "foreign", reason
                out.append(Token(ks, obj, path, text, ref, category, why))
    return out


def render_expr(tok: Token, strict: bool) -> envsubst.Rendered:
    return envsubst.render(tok.expr, tok.ks.variables, strict=strict)


def render_line(tok: Token, strict: bool) -> str | None:
    """The source line around the token after substitution (None when not known)."""
    start, end = line_around(tok.text, tok.ref.start)
    line = tok.text[start:end]
    r = envsubst.render(line, tok.ks.variables, strict=False)
    if r.text is None or r.error is not None or strict and render_expr(tok, strict).error is not None:
        return None
    return short(r.text.strip(), 100)


def became_null(tok: Token) -> bool:
    """The whole scalar renders empty and YAML reads it back as null (flux2#5245)."""
    return tok.ref.start == 0 and tok.ref.end == len(tok.text) and value_at(tok.obj.data, tok.path) is None


# -- substituteFrom producers: fluxgraph.ownership -------------------------------------


def substitute_from_path(obj: AppliedObject | None, kind: str, name: str) -> Path:
    """Path of the substituteFrom entry ``kind/name`` in a Kustomization object's source."""
    base: Path = ("spec", "postBuild", "substituteFrom")
    if obj is None:
        return base
    lst = value_at(obj.pre_substitution, base)
    if isinstance(lst, list):
        for i, e in enumerate(lst):
            if isinstance(e, dict) and e.get("name") == name and (e.get("kind") or kind) == kind:
                return (*base, i)
    return base


# -- postBuild injected from outside the repository ---------------------------------------


def expects_substitution(obj: AppliedObject) -> bool:
    """The object carries a sign that its author expects Flux to substitute it: the opt-out
    label/annotation, or a ``$${`` escape (outside a Kustomization's self-evaluated fields)."""
    if substitution_disabled(obj.pre_substitution):
        return True
    return any(
        not self_evaluated(obj, path) for path, _ in object_strings(obj, "$${")
    )


def postbuild_injected(cluster: ClusterModel) -> list[str]:
    """The Kustomizations without postBuild that evidently get one from outside the repository.

    A Kustomization that admission in the cluster may give ``spec.postBuild``
    (``KustomizationNode.mutated_by``, ``fluxgraph.admission``) is one. Otherwise, when two or
    more Kustomizations that declare no postBuild carry objects that expect substitution (see
    ``expects_substitution``), the repository evidently gets ``spec.postBuild`` from outside
    itself (a mutating webhook installed in a way no manifest shows), which no static reading
    can see: every Kustomization without postBuild is returned, and the rules that judge
    "this Kustomization does not substitute" stay silent for them. One such Kustomization
    alone reads as a forgotten postBuild and is reported."""
    no_pb = [ks.id for ks in cluster.kustomizations.values() if ks.spec.post_build is None]
    mutated = [k for k in no_pb if any(m.may_change("postBuild") for m in cluster.kustomizations[k].mutated_by)]
    marked = [
        ks.id
        for ks in cluster.kustomizations.values()
        if ks.spec.post_build is None
        and ks.status == "built"
        and not ks.mutated_by
        and any(expects_substitution(o) for o in ks.objects)
    ]
    return no_pb if len(marked) >= 2 else mutated


def key_location(obj: AppliedObject, path: Path) -> Location:
    """Where the mapping key at the end of ``path`` is written in the source (its value's
    position when the key is not found there)."""
    r = obj.resource
    doc = r.doc
    if doc is None or doc.node is None or not path:
        return r.position(path)
    node: Any = doc.node
    for step in path[:-1]:
        nxt = None
        if isinstance(node, MappingNode):
            nxt = next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == step), None)
        elif isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
            nxt = node.value[step]
        if nxt is None:
            return r.position(path)
        node = nxt
    if isinstance(node, MappingNode):
        for k, _ in node.value:
            if isinstance(k, ScalarNode) and k.value == path[-1]:
                return Location(r.origin.file, k.start_mark.line + 1, k.start_mark.column + 1)
    return r.position(path)
