"""The objects a Flux Operator ``ResourceSet`` generates, rendered from the repository.

A ``ResourceSet`` (``fluxcd.controlplane.io/v1``) holds object templates (``spec.resources``,
``spec.resourcesTemplate``, or both per ``spec.steps``) and input sets; the operator renders
every template once per input set and applies the result (controlplaneio-fluxcd/flux-operator
``internal/builder/resourceset.go``). This module does the same for what the repository
holds, so that the Kustomizations, HelmReleases and sources a fleet generates join the graph.

What is followed, from the operator's source:

* Inputs (``internal/inputs``): the ResourceSet's own ``spec.inputs``, then the providers of
  ``spec.inputsFrom`` sorted by (apiVersion/kind, namespace, name); each input set gets a
  ``provider`` map (apiVersion, kind, name, namespace: ``getFromProvider``). A
  ``ResourceSetInputProvider`` of type ``Static`` exports its ``spec.defaultValues`` plus an
  ``id`` derived from the object's UID (``resourcesetinputprovider_controller.go``): the values
  are evaluated, the ``id`` is not. Every other provider type reads Git branches, pull
  requests, OCI tags... outside the repository: the ResourceSet is not evaluated, naming it.
  ``inputStrategy`` ``Flatten`` (default) appends the sets; ``Permute`` builds the cartesian
  product of the providers' sets, each scoped under the provider's normalized name
  (``permuter.go``, ``keys.go``), with an ``id`` per permutation that is not evaluated.
* Templates (``newTemplate``): Go ``text/template`` with the delimiters ``<<`` and ``>>``,
  ``missingkey=error``, slim-sprig's functions, ``inputs`` (the input set), ``slugify``,
  ``toYaml``. The subset rendered here: ``<< inputs.a.b >>`` and ``$var.a`` field chains, dot,
  string, number and boolean literals, parenthesised pipelines, ``$x := ...``, ``if``/``else
  if``/``else``/``end``, ``range`` (over lists and maps, sorted keys, with one or two
  variables and ``else``), the functions of ``_FUNCS`` (sprig's ``get``, ``dig``, ``default``,
  ``printf`` for ``%s %v %d %q``...), trim markers ``<<-`` and ``->>``. Anything else (``with``,
  ``define``, other functions or verbs) leaves the ResourceSet not evaluated, with the
  construct named: never a guess.
* ``spec.resources`` entries are rendered scalar by scalar (the operator renders their YAML
  form and reads it back, so a rendered scalar that was a plain YAML scalar is read back as
  YAML: ``"<< inputs.replicas >>"`` becomes the number 3); ``resourcesTemplate`` is rendered as
  text and read as multi-document YAML. Objects annotated ``fluxcd.controlplane.io/reconcile:
  disabled`` are left out; duplicates (group, kind, namespace, name) are dropped, those of
  ``resources`` first (``BuildResourceSet``).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from fluxgraph.model import as_dict, as_list
from fluxgraph.yamlio import YamlLoadError, load_text

GROUP = "fluxcd.controlplane.io"
RECONCILE = "fluxcd.controlplane.io/reconcile"
MAX_PERMUTATIONS = 10000  # internal/inputs/permuter.go maxPermutations


class NotEvaluated(Exception):
    """The ResourceSet uses something that cannot be rendered from the repository."""


class TemplateError(Exception):
    """The template fails as the operator's would (a missing key, a malformed action)."""


class _Unknown:
    """A value only the cluster knows (an ``id`` derived from a UID)."""

    def __init__(self, what: str) -> None:
        self.what = what


# -- inputs -------------------------------------------------------------------------------


def normalize_key(key: str) -> str:
    """``NormalizeKeyForTemplate``: lower case, white space and punctuation to ``_``, letters
    and digits outside ``[a-z0-9]`` and other characters dropped, runs of ``_`` collapsed."""
    out = []
    for ch in key:
        c = ch.lower()
        if c.isspace() or unicodedata.category(c).startswith("P"):
            out.append("_")
        elif ("a" <= c <= "z") or ("0" <= c <= "9"):
            out.append(c)
    return "_".join(w for w in "".join(out).split("_") if w)


def input_sets(rset: dict[str, Any], providers: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """The combined input sets of the ResourceSet ``rset`` (its data, as applied), with
    ``providers`` the ResourceSetInputProviders of its namespace by (namespace, name). Raises
    NotEvaluated for inputs that come from outside the repository."""
    meta = as_dict(rset.get("metadata"))
    ns = str(meta.get("namespace") or "")
    spec = as_dict(rset.get("spec"))
    own = [dict(as_dict(i)) for i in as_list(spec.get("inputs"))]
    groups: list[tuple[str, list[dict[str, Any]]]] = [(str(meta.get("name") or ""), _with_provider(own, "ResourceSet", rset))]
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for ref in as_list(spec.get("inputsFrom")):
        ref = as_dict(ref)
        kind = ref.get("kind") or "ResourceSetInputProvider"
        if kind != "ResourceSetInputProvider":
            raise NotEvaluated(f"inputsFrom {kind} {ref.get('name') or ''}: its inputs come from the cluster")
        if isinstance(ref.get("name"), str):
            p = providers.get((ns, ref["name"]))
            if p is None:
                raise NotEvaluated(f"inputsFrom ResourceSetInputProvider {ns}/{ref['name']} is not in the repository")
            chosen[(ns, ref["name"])] = p
        sel = as_dict(ref.get("selector"))
        if sel:
            from fluxgraph.materialize import selector_matches

            for (pns, pname), p in providers.items():
                labels = as_dict(as_dict(p.get("metadata")).get("labels"))
                if pns == ns and selector_matches(sel, {str(k): str(v) for k, v in labels.items()}):
                    chosen[(pns, pname)] = p
    for (_pns, pname), p in sorted(chosen.items(), key=lambda kv: kv[0]):
        ptype = as_dict(p.get("spec")).get("type")
        if ptype != "Static":
            raise NotEvaluated(f"inputsFrom ResourceSetInputProvider {ns}/{pname} of type {ptype}: its inputs come from outside the repository")
        values = dict(as_dict(as_dict(p.get("spec")).get("defaultValues")))
        values["id"] = _Unknown(f"the id of ResourceSetInputProvider {ns}/{pname} (derived from its UID)")
        groups.append((pname, _with_provider([values], "ResourceSetInputProvider", p)))
    strategy = as_dict(spec.get("inputStrategy"))
    if (strategy.get("name") or "Flatten") == "Flatten":
        return [s for _, sets in groups for s in sets]
    if strategy.get("name") != "Permute":
        raise TemplateError(f"unknown input strategy: '{strategy.get('name')}'")
    include_empty = strategy.get("includeEmptyProviders") is True
    scoped = [[{normalize_key(name): s} for s in sets] for name, sets in groups if sets or include_empty]
    if not scoped or any(not sets for sets in scoped):
        return []
    total = 1
    for sets in scoped:
        total *= len(sets)
    if total > MAX_PERMUTATIONS:
        raise TemplateError(f"the inputs would make {total} permutations, more than the operator's {MAX_PERMUTATIONS}")
    out = []
    for combo in itertools.product(*scoped):
        perm: dict[str, Any] = {}
        for part in combo:
            perm.update(part)
        perm["id"] = _Unknown("the id of a permutation (a checksum of its inputs' ids)")
        out.append(perm)
    return out


def _with_provider(sets: list[dict[str, Any]], kind: str, obj: dict[str, Any]) -> list[dict[str, Any]]:
    meta = as_dict(obj.get("metadata"))
    for s in sets:
        s["provider"] = {
            "apiVersion": str(obj.get("apiVersion") or f"{GROUP}/v1"),
            "kind": kind,
            "name": str(meta.get("name") or ""),
            "namespace": str(meta.get("namespace") or ""),
        }
    return sets


# -- templates ----------------------------------------------------------------------------

_ACTION = re.compile(r"<<(-\s)?(.*?)(\s-)?>>", re.S)
_TOKEN = re.compile(
    r"""\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<raw>`[^`]*`)|(?P<num>-?\d+(?:\.\d+)?)|(?P<pipe>\|)|(?P<lp>\()|(?P<rp>\))"""
    r"""|(?P<decl>:=)|(?P<comma>,)|(?P<var>\$[A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)"""
    r"""|(?P<word>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)|(?P<field>(?:\.[A-Za-z0-9_]+)+|\.)|(?P<other>\S))"""
)
_UNSUPPORTED = frozenset({"with", "define", "template", "block", "break", "continue"})


def go_str(v: Any) -> str:
    """How text/template prints a value decoded from JSON (``fmt.Sprint``)."""
    if isinstance(v, _Unknown):
        raise NotEvaluated(v.what)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if v is None:
        return "<no value>"
    if isinstance(v, (int, float)):
        return _go_float(float(v))
    raise NotEvaluated(f"a {type(v).__name__} value printed by a template (Go's map/slice formatting)")


def _go_float(f: float) -> str:
    """How fmt prints a float64 (``%v`` is ``%g`` with the shortest precision): the shortest
    digits, in exponent form when the exponent is below -4 or at least 6 (strconv
    ``FormatFloat``: "if precision was the shortest possible, use precision 6 for this
    decision"): 3 -> ``3``, 1000000 -> ``1e+06``."""
    if f == 0:
        return "0"
    sign, digs, exp = Decimal(repr(f)).normalize().as_tuple()
    assert isinstance(exp, int)
    d = "".join(map(str, digs))
    e = len(d) + exp - 1
    neg = "-" if sign else ""
    if e < -4 or e >= 6:
        m = d[0] + ("." + d[1:] if len(d) > 1 else "")
        return f"{neg}{m}e{'+' if e >= 0 else '-'}{abs(e):02d}"
    if exp >= 0:
        return neg + d + "0" * exp
    point = len(d) + exp
    return neg + (d[:point] if point > 0 else "0") + "." + "0" * max(0, -point) + d[max(point, 0) :]


def truth(v: Any) -> bool:
    """text/template's truth: false, 0, nil and empty strings, maps and lists are false."""
    if isinstance(v, _Unknown):
        raise NotEvaluated(v.what)
    return not (v is None or v is False or v == 0 or v == "" or v == [] or v == {})


def _quote(*args: Any) -> str:
    return " ".join('"' + go_str(a).replace("\\", "\\\\").replace('"', '\\"') + '"' for a in args if a is not None)


def _default(d: Any, *given: Any) -> Any:
    v = given[0] if given else None
    return v if truth(v) else d


def _get(m: Any, key: Any) -> Any:
    """sprig ``get``: the value at ``key``, or "" where the map has none."""
    if not isinstance(m, dict):
        raise TemplateError(f"get: {type(m).__name__} is not a map")
    return m.get(go_str(key), "")


def _dig(*args: Any) -> Any:
    """sprig ``dig KEY... DEFAULT MAP``: the value at the path of keys, or DEFAULT."""
    if len(args) < 3 or not isinstance(args[-1], dict):
        raise TemplateError("dig needs keys, a default and a map")
    cur: Any = args[-1]
    for k in args[:-2]:
        if isinstance(cur, _Unknown):
            raise NotEvaluated(cur.what)
        if not isinstance(cur, dict) or go_str(k) not in cur:
            return args[-2]
        cur = cur[go_str(k)]
    return cur


def _printf(fmt: Any, *args: Any) -> str:
    """fmt.Sprintf for the verbs templates use: %s %v %d %q %%."""
    out, it, f, i = [], iter(args), go_str(fmt), 0
    while i < len(f):
        c = f[i]
        if c != "%" or i + 1 >= len(f):
            out.append(c)
            i += 1
            continue
        verb = f[i + 1]
        i += 2
        if verb == "%":
            out.append("%")
            continue
        try:
            a = next(it)
        except StopIteration:
            out.append(f"%!{verb}(MISSING)")
            continue
        if verb in "sv":
            out.append(go_str(a))
        elif verb == "d" and isinstance(a, (int, float)) and not isinstance(a, bool) and float(a).is_integer():
            out.append(str(int(a)))
        elif verb == "q":
            out.append(_quote(a))
        else:
            raise NotEvaluated(f"printf verb %{verb}, which fluxgraph does not render")
    return "".join(out)


_FUNCS: dict[str, Callable[..., Any]] = {
    "quote": _quote,
    "squote": lambda *a: " ".join("'" + go_str(x) + "'" for x in a if x is not None),
    "lower": lambda s: go_str(s).lower(),
    "upper": lambda s: go_str(s).upper(),
    "trim": lambda s: go_str(s).strip(" \t\n\r\v\f"),
    "trimPrefix": lambda p, s: go_str(s).removeprefix(go_str(p)),
    "trimSuffix": lambda p, s: go_str(s).removesuffix(go_str(p)),
    "replace": lambda old, new, s: go_str(s).replace(go_str(old), go_str(new)),
    "default": _default,
    "toString": go_str,
    "get": _get,
    "dig": _dig,
    "hasKey": lambda m, k: isinstance(m, dict) and go_str(k) in m,
    "printf": _printf,
    "eq": lambda a, *b: any(a == x for x in b),
    "ne": lambda a, b: a != b,
    "not": lambda a: not truth(a),
    "and": lambda *a: next((x for x in a if not truth(x)), a[-1]),
    "or": lambda *a: next((x for x in a if truth(x)), a[-1]),
    "empty": lambda a: not truth(a),
    "join": lambda sep, lst: go_str(sep).join(go_str(x) for x in lst) if isinstance(lst, list) else go_str(lst),
}


@dataclass
class _Tok:
    kind: str
    text: str


def _tokens(action: str) -> list[_Tok]:
    out = []
    for m in _TOKEN.finditer(action):
        kind = m.lastgroup
        if kind is not None:
            out.append(_Tok(kind, m.group(kind)))
    return out


class _Scope:
    def __init__(self, inputs: dict[str, Any]) -> None:
        self.inputs = inputs
        self.vars: list[dict[str, Any]] = [{"$": None}]
        self.dot: Any = None

    def lookup(self, name: str) -> Any:
        for frame in reversed(self.vars):
            if name in frame:
                return frame[name]
        raise TemplateError(f"undefined variable: {name}")


class _Pipeline:
    """One pipeline of an action: ``operand... | fn args | fn``, evaluated in a scope."""

    def __init__(self, toks: list[_Tok], scope: _Scope) -> None:
        self.toks, self.i, self.scope = toks, 0, scope

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def pipeline(self) -> Any:
        value = self.command(None, first=True)
        while (t := self.peek()) is not None and t.kind == "pipe":
            self.i += 1
            value = self.command(value, first=False)
        return value

    def command(self, piped: Any, first: bool) -> Any:
        t = self.peek()
        if t is None:
            raise TemplateError("missing value for command")
        if t.kind == "word" and "." not in t.text and t.text in _FUNCS:
            self.i += 1
            args = []
            while (a := self.peek()) is not None and a.kind not in ("pipe", "rp"):
                args.append(self.operand())
            if not first:
                args.append(piped)
            try:
                return _FUNCS[t.text](*args)
            except TypeError as e:
                raise TemplateError(f"wrong number of args for {t.text}: {e}") from None
        if not first:
            raise NotEvaluated(f"the template pipes into {t.text!r}, which fluxgraph does not render")
        value = self.operand()
        if (a := self.peek()) is not None and a.kind not in ("pipe", "rp"):
            raise NotEvaluated(f"the template calls {t.text!r} with arguments, which fluxgraph does not render")
        return value

    def operand(self) -> Any:
        t = self.peek()
        assert t is not None
        self.i += 1
        if t.kind == "str":
            return bytes(t.text[1:-1], "utf-8").decode("unicode_escape")
        if t.kind == "raw":
            return t.text[1:-1]
        if t.kind == "num":
            return float(t.text) if "." in t.text else int(t.text)
        if t.kind == "lp":
            v = self.pipeline()
            close = self.peek()
            if close is None or close.kind != "rp":
                raise TemplateError("unclosed left paren")
            self.i += 1
            return v
        if t.kind == "var":
            name, *fields = t.text.split(".")
            return _fields(self.scope.lookup(name), fields, name)
        if t.kind == "field":
            return _fields(self.scope.dot, [f for f in t.text.split(".") if f], ".")
        if t.kind == "word":
            head, *fields = t.text.split(".")
            if head in ("true", "false"):
                return head == "true"
            if head == "nil":
                return None
            if head == "inputs":
                return _fields(self.scope.inputs, fields, "inputs")
            if head in _FUNCS and not fields:
                return _FUNCS[head]()
            raise NotEvaluated(f"the template function {head!r}, which fluxgraph does not render")
        raise NotEvaluated(f"the template's {t.text!r}, which fluxgraph does not render")


def _fields(value: Any, fields: list[str], path: str) -> Any:
    for f in fields:
        if isinstance(value, _Unknown):
            raise NotEvaluated(value.what)
        if value is None:
            raise TemplateError(f"nil pointer evaluating {path}.{f}")
        if not isinstance(value, dict):
            raise TemplateError(f"can't evaluate field {f} in {path}")
        if f not in value:
            raise TemplateError(f'map has no entry for key "{f}" ({path}.{f})')
        value = value[f]
        path += f".{f}"
    return value


# the template as a tree: text, actions, and if/range blocks with their bodies
_Node = Any  # str | ("action", toks) | ("if", [(toks, body)], else_body) | ("range", vars, toks, body, else_body)


def _parse(text: str) -> list[_Node]:
    pieces: list[tuple[str, Any]] = []
    pos = 0
    for m in _ACTION.finditer(text):
        before = text[pos : m.start()]
        if m.group(1):
            before = before.rstrip(" \t\r\n")
        pieces.append(("text", before))
        pieces.append(("action", m.group(2)))
        pos = m.end()
        if m.group(3):
            rest = text[pos:]
            pos += len(rest) - len(rest.lstrip(" \t\r\n"))
    pieces.append(("text", text[pos:]))
    body, _, _ = _block(pieces, 0, top=True)
    return body


def _block(pieces: list[tuple[str, Any]], i: int, top: bool = False) -> tuple[list[_Node], int, str]:
    """Nodes from ``pieces[i]`` to the ``end`` or ``else`` that closes the block: (nodes, next
    index, "end" / "else ..." / "" at the end of the template)."""
    out: list[_Node] = []
    while i < len(pieces):
        kind, val = pieces[i]
        i += 1
        if kind == "text":
            if val:
                out.append(val)
            continue
        toks = _tokens(val)
        if not toks:
            raise TemplateError("missing value for command")
        head = toks[0].text if toks[0].kind == "word" else ""
        if head in _UNSUPPORTED:
            raise NotEvaluated(f"the template's {head!r} action, which fluxgraph does not render")
        if head in ("end", "else"):
            if top:
                raise TemplateError(f"unexpected {head}")
            return out, i, val.strip()
        if head == "if":
            branches: list[tuple[list[_Tok], list[_Node]]] = [(toks[1:], [])]
            elses: list[_Node] = []
            while True:
                body, i, closer = _block(pieces, i)
                branches[-1] = (branches[-1][0], body)
                if closer == "end":
                    break
                rest = _tokens(closer)[1:]
                if rest and rest[0].kind == "word" and rest[0].text == "if":
                    branches.append((rest[1:], []))
                    continue
                elses, i, closer = _block(pieces, i)
                if closer != "end":
                    raise TemplateError("expected end after else")
                break
            out.append(("if", branches, elses))
            continue
        if head == "range":
            rest = toks[1:]
            names: list[str] = []
            if any(t.kind == "decl" for t in rest):
                k = next(j for j, t in enumerate(rest) if t.kind == "decl")
                names = [t.text for t in rest[:k] if t.kind == "var"]
                rest = rest[k + 1 :]
            body, i, closer = _block(pieces, i)
            elses = []
            if closer != "end":
                elses, i, closer = _block(pieces, i)
                if closer != "end":
                    raise TemplateError("expected end after else")
            out.append(("range", names, rest, body, elses))
            continue
        if any(t.kind == "decl" for t in toks):
            if toks[0].kind != "var" or len(toks) < 3 or toks[1].kind != "decl":
                raise NotEvaluated("a template variable declaration fluxgraph does not render")
            out.append(("set", toks[0].text, toks[2:]))
            continue
        if any(t.kind in ("other", "comma") for t in toks):
            bad = next(t.text for t in toks if t.kind in ("other", "comma"))
            raise NotEvaluated(f"the template's {bad!r}, which fluxgraph does not render")
        out.append(("action", toks))
    if not top:
        raise TemplateError("unexpected EOF: a block has no end")
    return out, i, ""


def _eval_pipeline(toks: list[_Tok], scope: _Scope) -> Any:
    p = _Pipeline(toks, scope)
    value = p.pipeline()
    if (t := p.peek()) is not None:
        raise TemplateError(f"unexpected {t.text!r} in operand")
    return value


def _execute(nodes: list[_Node], scope: _Scope, out: list[str]) -> None:
    for n in nodes:
        if isinstance(n, str):
            out.append(n)
        elif n[0] == "action":
            out.append(go_str(_eval_pipeline(n[1], scope)))
        elif n[0] == "set":
            scope.vars[-1][n[1]] = _eval_pipeline(n[2], scope)
        elif n[0] == "if":
            for cond, body in n[1]:
                if truth(_eval_pipeline(cond, scope)):
                    _execute(body, scope, out)
                    break
            else:
                _execute(n[2], scope, out)
        elif n[0] == "range":
            names, toks, body, elses = n[1], n[2], n[3], n[4]
            seq = _eval_pipeline(toks, scope)
            if isinstance(seq, _Unknown):
                raise NotEvaluated(seq.what)
            if isinstance(seq, dict):
                items = [(k, seq[k]) for k in sorted(seq)]
            elif isinstance(seq, list):
                items = list(enumerate(seq))
            elif seq is None:
                items = []
            else:
                raise TemplateError(f"range can't iterate over {go_str(seq)}")
            if not items:
                _execute(elses, scope, out)
                continue
            saved = scope.dot
            for k, v in items:
                frame: dict[str, Any] = {}
                if len(names) == 1:
                    frame[names[0]] = v
                elif len(names) >= 2:
                    frame[names[0]], frame[names[1]] = k, v
                scope.vars.append(frame)
                scope.dot = v
                try:
                    _execute(body, scope, out)
                finally:
                    scope.vars.pop()
            scope.dot = saved


def render(text: str, inputs: dict[str, Any]) -> str:
    """``text`` with every ``<< ... >>`` action rendered for the input set ``inputs``."""
    out: list[str] = []
    _execute(_parse(text), _Scope(inputs), out)
    return "".join(out)


# -- objects ------------------------------------------------------------------------------

_PLAIN_UNSAFE = re.compile(r"^[-?:,\[\]{}#&*!|>'\"%@`\s]|: | #|\s$|\n")


def _render_value(v: Any, inputs: dict[str, Any]) -> Any:
    if isinstance(v, dict):
        return {(render(k, inputs) if isinstance(k, str) and "<<" in k else k): _render_value(x, inputs) for k, x in v.items()}
    if isinstance(v, list):
        return [_render_value(x, inputs) for x in v]
    if isinstance(v, str) and "<<" in v:
        out = render(v, inputs)
        if _PLAIN_UNSAFE.search(v) is None:
            # a plain scalar in the YAML the operator renders: read back as YAML
            try:
                docs = load_text(f"v: {out}\n")
            except Exception:  # noqa: BLE001 - text the operator would fail to read; keep it
                return out
            if docs and isinstance(docs[0], dict) and "v" in docs[0]:
                return docs[0]["v"]
        return out
    return v


def build(rset: dict[str, Any], providers: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects the ResourceSet ``rset`` generates (``BuildResourceSetFromSpec``). Raises
    NotEvaluated or TemplateError."""
    try:
        return _build(rset, providers)
    except (NotEvaluated, TemplateError):
        raise
    except YamlLoadError as e:
        raise TemplateError(f"the rendered resourcesTemplate is not YAML: {e}") from None
    except (RecursionError, ValueError, TypeError) as e:
        raise TemplateError(f"{type(e).__name__}: {e}") from None


def _build(rset: dict[str, Any], providers: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    spec = as_dict(rset.get("spec"))
    sets = input_sets(rset, providers)
    steps = [as_dict(s) for s in as_list(spec.get("steps"))] or [spec]
    if spec.get("steps") and (spec.get("resources") or spec.get("resourcesTemplate")):
        raise TemplateError("spec.steps is mutually exclusive with spec.resources and spec.resourcesTemplate")
    out: list[dict[str, Any]] = []
    for step in steps:
        out.extend(_build_step(step, sets))
    return out


def _build_step(step: dict[str, Any], sets: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    seen: set[tuple[str, str, str, str]] = set()
    per_set: list[dict[str, Any] | None] = list(sets) if sets else [None]
    candidates: list[tuple[dict[str, Any], bool]] = []  # (object, deduplicated)
    for tmpl in as_list(step.get("resources")):
        for s in per_set:
            obj = _render_value(tmpl, s or {}) if s is not None else _render_value(tmpl, {})
            candidates.append((as_dict(obj), s is not None))
    template = step.get("resourcesTemplate")
    if isinstance(template, str) and template:
        for s in per_set:
            for doc in load_text(render(template, s or {})):
                if isinstance(doc, dict):
                    candidates.append((doc, True))
    for obj, dedup in candidates:
        meta = as_dict(obj.get("metadata"))
        if dedup and as_dict(meta.get("annotations")).get(RECONCILE) == "disabled":
            continue
        api = str(obj.get("apiVersion") or "")
        key = (api.rpartition("/")[0], str(obj.get("kind") or ""), str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        if dedup and key in seen:
            continue
        seen.add(key)
        yield obj
