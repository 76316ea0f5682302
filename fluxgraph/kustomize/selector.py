"""Patch-target selection as kustomize does it.

Follows:

* ``api/types/selector.go`` -- group/version/kind/name/namespace are regular expressions
  anchored as ``^(?:...)$``; an empty field matches anything (so ``group: ""`` matches every
  group, the core one included).
* ``api/resmap/reswrangler.go`` (``Select``) -- the namespace is compared as the resource's
  *effective* namespace: ``default`` when the resource has none, and a sentinel that no
  ordinary pattern matches for cluster-scoped kinds; name and namespace may match either the
  current or the original (pre-prefix/suffix) value.
* ``api/resid/gvk.go`` / ``resid.go`` -- apiVersion splits at the first ``/`` into group and
  version; cluster scope comes from the builtin OpenAPI document (Kubernetes v1.21.2 in
  kustomize v5.5), anything unknown (CRDs) being namespaced.
* ``k8s.io/apimachinery/pkg/labels/selector.go`` (vendored by kyaml) -- the label-selector
  lexer, parser, validation and matching used for ``labelSelector`` and
  ``annotationSelector``.

Patterns are compiled and matched by RE2 (the ``google-re2`` bindings), the library whose
syntax Go's ``regexp`` implements: time linear in the name, whatever the pattern (a
backtracking matcher takes exponential time on ``(a|a)*b``, and patch targets are untrusted
input); backreferences, look-arounds and repeat counts above 1000 are refused, and the digit,
space and word classes are ASCII, as in Go. A pattern RE2 refuses raises
:class:`KustomizeError`, as kustomize fails on it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from fluxgraph.kustomize.errors import KustomizeError

__all__ = [
    "DEFAULT_NAMESPACE",
    "KUSTOMIZE_CLUSTER_SCOPED",
    "NON_NAMESPACEABLE",
    "LabelSelector",
    "Requirement",
    "effective_namespace",
    "linear_regex",
    "is_cluster_scoped",
    "kustomize_cluster_scoped",
    "matches",
    "parse_label_selector",
    "scalar_text",
    "split_api_version",
]

DEFAULT_NAMESPACE = "default"
#: kustomize's ``resid.TotallyNotANamespace``: the effective namespace of cluster-scoped objects.
NON_NAMESPACEABLE = "_non_namespaceable_"

#: (apiVersion, kind) kustomize knows to be cluster-scoped: the ``false`` entries of kyaml's
#: ``precomputedIsNamespaceScoped`` (kyaml/openapi/openapi.go), the Kubernetes v1.21.2 OpenAPI
#: document that kustomize v5 embeds by default (kustomize v5.8.1, kyaml v0.21.1, as pinned by
#: fluxcd/pkg kustomize/go.mod; kubectl's v5.5 has the same table). The key is the exact
#: apiVersion: ``resid.NewGvk`` asks ``openapi.IsCertainlyClusterScoped(TypeMeta{APIVersion,
#: Kind})``, so any other version (``flowcontrol.apiserver.k8s.io/v1`` FlowSchema,
#: ``rbac.authorization.k8s.io/v1alpha1`` ClusterRole), any kind added after v1.21 (IPAddress,
#: ValidatingAdmissionPolicy ...), a create-only kind with no GET path (TokenReview) and every
#: custom kind are namespaceable to kustomize: its namespace transformer sets their namespace.
#: The API server's view is another question (``fluxgraph.scope``).
KUSTOMIZE_CLUSTER_SCOPED: frozenset[tuple[str, str]] = frozenset(
    (api_version, kind)
    for versions, kinds in (
        (
            ("admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1beta1"),
            ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"),
        ),
        (("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"), ("CustomResourceDefinition",)),
        (("apiregistration.k8s.io/v1", "apiregistration.k8s.io/v1beta1"), ("APIService",)),
        (("certificates.k8s.io/v1", "certificates.k8s.io/v1beta1"), ("CertificateSigningRequest",)),
        (("flowcontrol.apiserver.k8s.io/v1beta1",), ("FlowSchema", "PriorityLevelConfiguration")),
        (("networking.k8s.io/v1", "networking.k8s.io/v1beta1"), ("IngressClass",)),
        (("node.k8s.io/v1", "node.k8s.io/v1beta1"), ("RuntimeClass",)),
        (("policy/v1beta1",), ("PodSecurityPolicy",)),
        (
            ("rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1beta1"),
            ("ClusterRole", "ClusterRoleBinding"),
        ),
        (("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1"), ("PriorityClass",)),
        (
            ("storage.k8s.io/v1", "storage.k8s.io/v1beta1"),
            ("CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"),
        ),
        (("v1",), ("ComponentStatus", "Namespace", "Node", "NodeProxyOptions", "PersistentVolume")),
    )
    for api_version in versions
    for kind in kinds
)
_KUSTOMIZE_CLUSTER_SCOPED_GROUPS: dict[str, frozenset[str]] = {
    kind: frozenset(av.rpartition("/")[0] for av, k in KUSTOMIZE_CLUSTER_SCOPED if k == kind)
    for kind in {k for _, k in KUSTOMIZE_CLUSTER_SCOPED}
}


def kustomize_cluster_scoped(api_version: Any, kind: Any) -> bool:
    """kyaml ``openapi.IsCertainlyClusterScoped``: whether kustomize knows (apiVersion, kind)
    to be cluster-scoped. Everything else is namespaceable to kustomize."""
    return isinstance(api_version, str) and isinstance(kind, str) and (api_version, kind) in KUSTOMIZE_CLUSTER_SCOPED


def split_api_version(api_version: Any) -> tuple[str, str]:
    """``apps/v1`` -> ``("apps", "v1")``; ``v1`` -> ``("", "v1")`` (resid.ParseGroupVersion)."""
    if not isinstance(api_version, str):
        return "", ""
    group, sep, version = api_version.partition("/")
    if not sep:
        return "", api_version
    return group, version


def is_cluster_scoped(kind: Any, group: str | None = None) -> bool:
    """Whether kustomize knows ``kind`` in ``group`` (any group when None) as cluster-scoped in
    some version: for name references, whose renames carry no apiVersion. Prefer
    :func:`kustomize_cluster_scoped` where the apiVersion is known."""
    if not isinstance(kind, str):
        return False
    groups = _KUSTOMIZE_CLUSTER_SCOPED_GROUPS.get(kind)
    if groups is None:
        return False
    return group is None or group in groups


def _meta(res: Mapping[str, Any]) -> Mapping[str, Any]:
    md = res.get("metadata")
    return md if isinstance(md, Mapping) else {}


def effective_namespace(res: Mapping[str, Any], namespace: Any = None) -> str:
    """kustomize's ResId.EffectiveNamespace for ``res`` (``namespace`` overrides its own)."""
    if kustomize_cluster_scoped(res.get("apiVersion"), res.get("kind")):
        return NON_NAMESPACEABLE
    ns = _meta(res).get("namespace") if namespace is None else namespace
    if not isinstance(ns, str) or not ns:
        return DEFAULT_NAMESPACE
    return ns


def scalar_text(value: Any) -> str:
    """The text kyaml sees for a scalar node built from ``value`` (YAML 1.2 core spelling)."""
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return ""
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    return ""


# --------------------------------------------------------------------------------------
# regex fields


class Regex(Protocol):
    def fullmatch(self, text: str) -> Any: ...


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> Regex:
    import re2  # google-re2: the RE2 library kustomize's Go regexp follows

    options = re2.Options()
    options.log_errors = False  # RE2 would print its complaint on stderr
    options.max_mem = _MAX_MEM
    try:
        return re2.compile(pattern, options)
    except re2.error as e:
        why = e.args[0] if e.args else e
        why = why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
        raise KustomizeError(f"invalid regular expression {pattern!r} in patch target: {why}") from None


_MAX_MEM = 8 << 20  # RE2's default; a pattern whose program needs more is refused


def linear_regex(pattern: str) -> Regex:
    """``pattern`` compiled by RE2 (``.fullmatch(text)``, None when it does not match), in
    time linear in the text whatever the pattern; KustomizeError when RE2 refuses it
    (backreferences, look-arounds, repeat counts over 1000). For any regex built from untrusted
    input."""
    return _compile(pattern)


def _field(target: Mapping[str, Any], key: str) -> str:
    v = target.get(key)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise KustomizeError(f"patch target field {key!r} must be a string, not {type(v).__name__}")
    return v


def _regex_ok(pattern: str, value: str) -> bool:
    if not pattern:
        return True
    return _compile(pattern).fullmatch(value) is not None


def matches(
    res: Mapping[str, Any],
    target: Mapping[str, Any],
    *,
    original_name: str | None = None,
    original_namespace: str | None = None,
) -> bool:
    """Whether resource ``res`` is selected by the kustomize patch ``target``.

    ``target`` holds optional ``group``, ``version``, ``kind``, ``name``, ``namespace``
    (anchored regular expressions), ``labelSelector`` and ``annotationSelector``. As in
    kustomize, name and namespace may also match the resource's original name/namespace
    (before namePrefix/nameSuffix/namespace transforms) when those are given.
    """
    if not isinstance(res, Mapping):
        raise KustomizeError(f"resource must be a mapping, not {type(res).__name__}")
    if not isinstance(target, Mapping):
        raise KustomizeError(f"patch target must be a mapping, not {type(target).__name__}")
    group_p = _field(target, "group")
    version_p = _field(target, "version")
    kind_p = _field(target, "kind")
    name_p = _field(target, "name")
    ns_p = _field(target, "namespace")
    label_sel = _field(target, "labelSelector")
    anno_sel = _field(target, "annotationSelector")
    # compile everything first so a bad pattern is reported whatever the resource
    for p in (group_p, version_p, kind_p, name_p, ns_p):
        if p:
            _compile(p)
    lsel = parse_label_selector(label_sel) if label_sel else None
    asel = parse_label_selector(anno_sel) if anno_sel else None

    md = _meta(res)
    if ns_p:
        cur_ns = effective_namespace(res)
        org_ns = effective_namespace(res, original_namespace) if original_namespace is not None else cur_ns
        if not _regex_ok(ns_p, org_ns) and not _regex_ok(ns_p, cur_ns):
            return False
    if name_p:
        cur = md.get("name")
        cur_name = cur if isinstance(cur, str) else scalar_text(cur)
        org_name = original_name if original_name is not None else cur_name
        if not _regex_ok(name_p, org_name) and not _regex_ok(name_p, cur_name):
            return False
    if group_p or version_p:
        group, version = split_api_version(res.get("apiVersion"))
        if group_p and not _regex_ok(group_p, group):
            return False
        if version_p and not _regex_ok(version_p, version):
            return False
    if kind_p:
        kind = res.get("kind")
        if not _regex_ok(kind_p, kind if isinstance(kind, str) else ""):
            return False
    if lsel is not None and not lsel.matches(_string_map(md.get("labels"))):
        return False
    if asel is not None and not asel.matches(_string_map(md.get("annotations"))):
        return False
    return True


def _string_map(m: Any) -> dict[str, str]:
    if not isinstance(m, Mapping):
        return {}
    return {str(k): scalar_text(v) for k, v in m.items()}


# --------------------------------------------------------------------------------------
# label selectors (k8s.io/apimachinery/pkg/labels/selector.go)

_ID, _EOS, _ERR = "identifier", "end of string", "error"
_SYMBOLS = {
    "(": "(",
    ")": ")",
    ",": ",",
    "!": "!",
    "!=": "!=",
    "=": "=",
    "==": "==",
    ">": "gt",
    "<": "lt",
}
_KEYWORDS = {"in": "in", "notin": "notin"}
_SPECIAL = frozenset("=!(),><")
_WS = frozenset(" \t\r\n")
_BINARY_OPS = "in, notin, =, ==, !=, gt, lt"

_QNAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUB_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_INT_RE = re.compile(r"[+-]?[0-9]+")


def _lex(s: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos, n = 0, len(s)

    def read() -> str:
        nonlocal pos
        if pos < n:
            ch = s[pos]
            pos += 1
            return ch
        return "\x00"

    while True:
        ch = read()
        while ch in _WS:
            ch = read()
        if ch == "\x00":
            out.append((_EOS, ""))
            return out
        if ch in _SPECIAL:
            buf = ch
            last: tuple[str, str] | None = (_SYMBOLS[ch], ch) if ch in _SYMBOLS else None
            while True:
                nxt = read()
                if nxt == "\x00":
                    break
                if nxt in _SPECIAL:
                    buf += nxt
                    if buf in _SYMBOLS:
                        last = (_SYMBOLS[buf], buf)
                    elif last is not None:
                        pos -= 1
                        break
                else:
                    pos -= 1
                    break
            if last is None:
                out.append((_ERR, f"error expected: keyword found '{buf}'"))
            else:
                out.append(last)
            continue
        buf = ch
        while True:
            nxt = read()
            if nxt == "\x00":
                break
            if nxt in _SPECIAL or nxt in _WS:
                pos -= 1
                break
            buf += nxt
        out.append((_KEYWORDS.get(buf, _ID), buf))


def _go_int(s: str) -> int | None:
    if not _INT_RE.fullmatch(s):
        return None
    v = int(s)
    if not -(2**63) <= v < 2**63:
        return None
    return v


def _validate_key(key: str) -> None:
    parts = key.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        elif len(prefix) > 253 or not _DNS1123_SUB_RE.fullmatch(prefix):
            errs.append("prefix part must be a lowercase RFC 1123 subdomain")
    else:
        raise KustomizeError(
            f"invalid label key {key!r}: a qualified name must consist of alphanumeric characters, "
            "'-', '_' or '.', with an optional DNS subdomain prefix and '/'"
        )
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME_RE.fullmatch(name):
        errs.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )
    if errs:
        raise KustomizeError(f"invalid label key {key!r}: " + "; ".join(errs))


def _validate_value(key: str, value: str) -> None:
    if len(value) > 63 or not _LABEL_VALUE_RE.fullmatch(value):
        raise KustomizeError(
            f"invalid label value {value!r} for key {key!r}: must be 63 characters or less and be empty "
            "or begin and end with an alphanumeric character, with '-', '_', '.' and alphanumerics between"
        )


@dataclass(frozen=True)
class Requirement:
    """One requirement of a label selector: ``key``, ``op`` (in, notin, =, ==, !=, exists,
    !, gt, lt) and the sorted values."""

    key: str
    op: str
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op in ("in", "=", "=="):
            return self.key in labels and labels[self.key] in self.values
        if op in ("notin", "!="):
            return self.key not in labels or labels[self.key] not in self.values
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        # gt / lt
        if self.key not in labels or len(self.values) != 1:
            return False
        have = _go_int(labels[self.key])
        want = _go_int(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op == "gt" else have < want


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector; requirements are ANDed (an empty one matches everything)."""

    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, Any]) -> bool:
        if not self.requirements:
            return True
        m = labels if all(isinstance(v, str) for v in labels.values()) else _string_map(labels)
        return all(r.matches(m) for r in self.requirements)


def _new_requirement(key: str, op: str, values: list[str]) -> Requirement:
    _validate_key(key)
    if op in ("in", "notin"):
        if not values:
            raise KustomizeError("for 'in', 'notin' operators, values set can't be empty")
    elif op in ("=", "==", "!="):
        if len(values) != 1:
            raise KustomizeError("exact-match compatibility requires one single value")
    elif op in ("exists", "!"):
        if values:
            raise KustomizeError("values set must be empty for exists and does not exist")
    elif op in ("gt", "lt"):
        if len(values) != 1:
            raise KustomizeError("for 'Gt', 'Lt' operators, exactly one value is required")
        if _go_int(values[0]) is None:
            raise KustomizeError("for 'Gt', 'Lt' operators, the value must be an integer")
    for v in values:
        _validate_value(key, v)
    return Requirement(key, op, tuple(sorted(set(values))))


class _Parser:
    def __init__(self, s: str) -> None:
        self.items = _lex(s)
        self.pos = 0

    def lookahead(self, values_ctx: bool) -> tuple[str, str]:
        tok, lit = self.items[min(self.pos, len(self.items) - 1)]
        if values_ctx and tok in ("in", "notin"):
            tok = _ID
        return tok, lit

    def consume(self, values_ctx: bool) -> tuple[str, str]:
        tok, lit = self.lookahead(values_ctx)
        self.pos += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.lookahead(True)
            if tok in (_ID, "!"):
                try:
                    reqs.append(self.requirement())
                except KustomizeError as e:
                    raise KustomizeError(f"unable to parse requirement: {e}") from None
                t, lit2 = self.consume(True)
                if t == _EOS:
                    return reqs
                if t == ",":
                    t2, l2 = self.lookahead(True)
                    if t2 not in (_ID, "!"):
                        raise KustomizeError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise KustomizeError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return reqs
            else:
                raise KustomizeError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        tok, lit = self.consume(True)
        op = ""
        if tok == "!":
            op = "!"
            tok, lit = self.consume(True)
        if tok != _ID:
            raise KustomizeError(f"found '{lit}', expected: identifier")
        key = lit
        _validate_key(key)
        t, _ = self.lookahead(True)
        if t in (_EOS, ","):
            if op != "!":
                op = "exists"
        if op in ("exists", "!"):
            return _new_requirement(key, op, [])
        tok, lit = self.consume(False)
        if tok not in ("in", "notin", "=", "==", "!=", "gt", "lt"):
            raise KustomizeError(f"found '{lit}', expected: {_BINARY_OPS}")
        op = tok
        values = self.set_values() if op in ("in", "notin") else self.exact_value()
        return _new_requirement(key, op, values)

    def set_values(self) -> list[str]:
        tok, lit = self.consume(True)
        if tok != "(":
            raise KustomizeError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(True)
        if tok in (_ID, ","):
            s = self.identifiers()
            tok, lit = self.consume(True)
            if tok != ")":
                raise KustomizeError(f"found '{lit}', expected: ')'")
            return s
        if tok == ")":
            self.consume(True)
            return [""]
        raise KustomizeError(f"found '{lit}', expected: ',', ')' or identifier")

    def identifiers(self) -> list[str]:
        s: list[str] = []
        while True:
            tok, lit = self.consume(True)
            if tok == _ID:
                s.append(lit)
                t2, l2 = self.lookahead(True)
                if t2 == ",":
                    continue
                if t2 == ")":
                    return s
                raise KustomizeError(f"found '{l2}', expected: ',' or ')'")
            if tok == ",":
                if not s:
                    s.append("")
                t2, _ = self.lookahead(True)
                if t2 == ")":
                    s.append("")
                    return s
                if t2 == ",":
                    self.consume(True)
                    s.append("")
                continue
            raise KustomizeError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> list[str]:
        tok, _ = self.lookahead(True)
        if tok in (_EOS, ","):
            return [""]
        tok, lit = self.consume(True)
        if tok == _ID:
            return [lit]
        raise KustomizeError(f"found '{lit}', expected: identifier")


@lru_cache(maxsize=4096)
def _parse_cached(s: str) -> LabelSelector:
    reqs = _Parser(s).parse()
    reqs.sort(key=lambda r: r.key)
    return LabelSelector(tuple(reqs))


def parse_label_selector(s: Any) -> LabelSelector:
    """Parse a Kubernetes label selector (``a=b,c!=d,e in (x,y),f notin (z),g,!h,n>1``).

    Raises :class:`KustomizeError` on bad syntax or invalid keys/values, like
    ``labels.Parse``.
    """
    if not isinstance(s, str):
        raise KustomizeError(f"label selector must be a string, not {type(s).__name__}")
    return _parse_cached(s)
