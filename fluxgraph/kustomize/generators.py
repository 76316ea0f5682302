"""configMapGenerator / secretGenerator and kustomize's content-hash name suffix.

Follows:

* ``api/internal/generators/{configmap,secret,utils}.go`` -- the object skeleton, labels and
  annotations from the generator options, ``immutable``, Secret ``type`` (default
  ``Opaque``), ConfigMap values that are not valid UTF-8 going to ``binaryData`` (base64),
  Secret values base64-encoded, ``files`` entries as ``path`` (key = basename) or
  ``key=path``, and the "illegally repeats the key" error.
* ``api/kv/kv.go`` -- sources are read env files first, then literals, then files;
  ``.env`` lines are left-trimmed, ``#`` comments and blank lines skipped, a UTF-8 BOM
  dropped from the first line, ``K`` alone means an empty value, values are *not*
  unquoted; literal values lose one pair of matching surrounding quotes.
* ``api/types/generatoroptions.go`` (``MergeGlobalOptionsIntoLocal``) -- kustomization-level
  ``generatorOptions`` fill in labels/annotations the entry does not set;
  ``disableNameSuffixHash`` and ``immutable`` are ORed.
* ``api/resmap/reswrangler.go`` (``appendReplaceOrMerge``) and ``api/resource/resource.go``
  (``CopyMergeMetaDataFieldsFrom``, ``MergeDataMapFrom``) for ``behavior: merge|replace``,
  see :func:`merge_generated`.
* ``api/hasher/hasher.go`` -- the hash: ``encodeConfigMap``/``encodeSecret`` marshal
  ``{kind, name, data[, binaryData]}`` (+ ``type``, ``stringData`` for Secrets) with Go's
  ``encoding/json`` (sorted keys, ``<>&`` and U+2028/2029 escaped), sha256, and the first 10
  hex digits pass through ``encode``. The name is looked up with the single path element
  ``"metadata/name"``, which never exists, so it is always ``""``: the hash depends on the
  content only (checked against ``kubectl kustomize``).

kustomize's field validator is a no-op (``api/internal/validate``), so keys are not
checked beyond the rules above; nor are they here.
"""

from __future__ import annotations

import base64
import decimal
import hashlib
import posixpath
from collections.abc import Callable, Mapping
from typing import Any

from fluxgraph.kustomize.errors import KustomizeError
from fluxgraph.kustomize.selector import scalar_text

__all__ = [
    "apply_hash_suffix",
    "configmap_from_args",
    "generator_behavior",
    "merge_generated",
    "merged_options",
    "name_hash",
    "needs_hash",
    "RemoteInput",
    "is_url",
    "parse_env_file",
    "secret_from_args",
]

Reader = Callable[[str], bytes]


class RemoteInput(KustomizeError):
    """Raised by a reader for an ``envs``/``files`` source that is a URL: kustomize's file
    loader fetches ``http(s)://`` sources (``api/loader/fileloader.go`` ``Load``); fluxgraph
    never does, so the value is not evaluated."""

    def __init__(self, url: str):
        super().__init__(f"{url} is a remote input")
        self.url = url


def is_url(path: str) -> bool:
    """Whether a generator source is fetched over HTTP by kustomize's loader."""
    return path.startswith(("http://", "https://"))

_BOM = "\ufeff"
# Go's unicode.IsSpace
_GO_SPACE = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


# --------------------------------------------------------------------------------------
# argument checking


def _opt_str(args: Mapping[str, Any], key: str, what: str) -> str:
    v = args.get(key)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise KustomizeError(f"{what}: {key!r} must be a string, not {type(v).__name__}")
    return v


def _str_list(args: Mapping[str, Any], key: str, what: str) -> list[str]:
    v = args.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise KustomizeError(f"{what}: {key!r} must be a list of strings, not {type(v).__name__}")
    for i, x in enumerate(v):
        if not isinstance(x, str):
            raise KustomizeError(f"{what}: {key}[{i}] must be a string, not {type(x).__name__}")
    return list(v)


def _str_map(v: Any, what: str) -> dict[str, str]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise KustomizeError(f"{what} must be a mapping of strings, not {type(v).__name__}")
    out: dict[str, str] = {}
    for k, x in v.items():
        if not isinstance(k, str) or not isinstance(x, str):
            raise KustomizeError(f"{what} must map strings to strings (got {k!r}: {x!r})")
        out[k] = x
    return out


def _bool(v: Any, what: str) -> bool:
    if v is None:
        return False
    if not isinstance(v, bool):
        raise KustomizeError(f"{what} must be a boolean, not {type(v).__name__}")
    return v


def _options(v: Any, what: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise KustomizeError(f"{what} must be a mapping, not {type(v).__name__}")
    return {
        "labels": _str_map(v.get("labels"), f"{what}.labels"),
        "annotations": _str_map(v.get("annotations"), f"{what}.annotations"),
        "disableNameSuffixHash": _bool(v.get("disableNameSuffixHash"), f"{what}.disableNameSuffixHash"),
        "immutable": _bool(v.get("immutable"), f"{what}.immutable"),
    }


def merged_options(args: Mapping[str, Any], options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The effective generator options of an entry: its own ``options`` with the
    kustomization's ``generatorOptions`` merged in (entry labels/annotations win, the two
    booleans are ORed)."""
    if not isinstance(args, Mapping):
        raise KustomizeError(f"generator entry must be a mapping, not {type(args).__name__}")
    local = _options(args.get("options"), "options")
    glob = _options(options, "generatorOptions")
    labels = dict(local.get("labels") or {})
    for k, v in (glob.get("labels") or {}).items():
        labels.setdefault(k, v)
    annotations = dict(local.get("annotations") or {})
    for k, v in (glob.get("annotations") or {}).items():
        annotations.setdefault(k, v)
    return {
        "labels": labels,
        "annotations": annotations,
        "disableNameSuffixHash": bool(
            local.get("disableNameSuffixHash") or glob.get("disableNameSuffixHash")
        ),
        "immutable": bool(local.get("immutable") or glob.get("immutable")),
    }


def needs_hash(args: Mapping[str, Any], options: Mapping[str, Any] | None = None) -> bool:
    """Whether the generated object gets a ``-<hash>`` name suffix (after option merging)."""
    return not merged_options(args, options)["disableNameSuffixHash"]


def generator_behavior(args: Mapping[str, Any]) -> str:
    """``create``, ``merge`` or ``replace``; kustomize treats any other value (and none) as
    create (``types.NewGenerationBehavior``)."""
    if not isinstance(args, Mapping):
        raise KustomizeError(f"generator entry must be a mapping, not {type(args).__name__}")
    b = _opt_str(args, "behavior", "generator")
    return b if b in ("merge", "replace") else "create"


# --------------------------------------------------------------------------------------
# sources


def _go_lstrip(s: str) -> str:
    i = 0
    while i < len(s) and s[i] in _GO_SPACE:
        i += 1
    return s[i:]


def parse_env_file(content: bytes | str) -> list[tuple[str, str]]:
    """Key/value pairs of an env file, as kustomize's kv loader reads them."""
    if isinstance(content, str):
        raw_lines = content.encode("utf-8", "surrogatepass").split(b"\n")
    else:
        raw_lines = content.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()  # bufio.ScanLines emits no empty final token
    pairs: list[tuple[str, str]] = []
    for n, raw in enumerate(raw_lines):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise KustomizeError(f"env file line {n + 1} has invalid utf8 bytes") from None
        if n == 0 and line.startswith(_BOM):
            line = line[1:]
        line = _go_lstrip(line)
        if not line or line[0] == "#":
            continue
        key, sep, value = line.partition("=")
        pairs.append((key, value if sep else ""))
    return pairs


def _parse_literal(source: str) -> tuple[str, str]:
    if source.startswith("=") or "=" not in source:
        raise KustomizeError(f"invalid literal source {source}, expected key=value")
    key, _, value = source.partition("=")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in ("'", '"'):
        value = value[1:-1]
    return key, value


def _go_base(p: str) -> str:
    if p == "":
        return "."
    p = p.rstrip("/")
    if p == "":
        return "/"
    return posixpath.basename(p)


def _parse_file_source(source: str) -> tuple[str, str]:
    i = source.find("=")
    if i == -1:
        return _go_base(source), source
    if i == 0:
        raise KustomizeError(f'missing key name for file path "{source[1:]}" in source "{source}"')
    key, path = source[:i], source[i + 1 :]
    if "=" in path:
        raise KustomizeError(f"source \"{source}\" key name or file path contains '='")
    if path == "":
        raise KustomizeError(f'missing file path for key name "{key}" in source "{source}"')
    return key, path


def _read(read: Reader, path: str) -> bytes:
    try:
        data = read(path)
    except OSError as e:
        raise KustomizeError(f"cannot read {path}: {e.strerror or e}") from None
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise KustomizeError(f"cannot read {path}: reader returned {type(data).__name__}")
    return bytes(data)


def _load_pairs(
    args: Mapping[str, Any], read: Reader, what: str, remote: list[tuple[str, str]] | None = None
) -> list[tuple[str, str | bytes]]:
    """The key/value pairs of a generator entry. A source the reader refuses with
    ``RemoteInput`` is recorded in ``remote`` as ``(key, url)`` (``key`` ``""`` for an env
    file, whose keys are unknown) and its value left empty; without ``remote`` it fails."""
    envs = _str_list(args, "envs", what)
    env = _opt_str(args, "env", what)
    if env:
        envs.append(env)
    literals = _str_list(args, "literals", what)
    files = _str_list(args, "files", what)
    pairs: list[tuple[str, str | bytes]] = []
    for p in envs:
        try:
            pairs.extend(parse_env_file(_read(read, p)))
        except RemoteInput as e:
            if remote is None:
                raise
            remote.append(("", e.url))
    for lit in literals:
        pairs.append(_parse_literal(lit))
    for src in files:
        key, path = _parse_file_source(src)
        try:
            pairs.append((key, _read(read, path)))
        except RemoteInput as e:
            if remote is None:
                raise
            remote.append((key, e.url))
            pairs.append((key, b""))
    return pairs


def _data_map(name: str, pairs: list[tuple[str, str | bytes]]) -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {}
    for k, v in pairs:
        if k in out:
            raise KustomizeError(f"configmap {name} illegally repeats the key `{k}`")
        out[k] = v
    return out


def _base(kind: str, args: Mapping[str, Any], namespace: str | None, what: str) -> dict[str, Any]:
    if not isinstance(args, Mapping):
        raise KustomizeError(f"{what} entry must be a mapping, not {type(args).__name__}")
    name = _opt_str(args, "name", what)
    if not name:
        raise KustomizeError(f"a {kind.lower()} must have a name")
    ns = _opt_str(args, "namespace", what)
    if not ns and isinstance(namespace, str):
        ns = namespace
    _opt_str(args, "behavior", what)
    md: dict[str, Any] = {"name": name}
    if ns:
        md["namespace"] = ns
    return {"apiVersion": "v1", "kind": kind, "metadata": md}


def _finish(obj: dict[str, Any], opts: dict[str, Any]) -> dict[str, Any]:
    md = obj["metadata"]
    if opts["labels"]:
        md["labels"] = {k: opts["labels"][k] for k in sorted(opts["labels"])}
    if opts["annotations"]:
        md["annotations"] = {k: opts["annotations"][k] for k in sorted(opts["annotations"])}
    return obj


def _b64(v: str | bytes) -> str:
    """kyaml ``encodeBase64``: from 70 characters on, the encoding is cut into 70-column lines,
    each ending in a newline (the value, and so the hash suffix, includes them)."""
    raw = v if isinstance(v, bytes) else v.encode("utf-8", "surrogatepass")
    enc = base64.b64encode(raw).decode("ascii")
    if len(enc) < 70:
        return enc
    return "".join(enc[i : i + 70] + "\n" for i in range(0, len(enc), 70))


def configmap_from_args(
    args: Mapping[str, Any],
    namespace: str | None = None,
    read: Reader | None = None,
    options: Mapping[str, Any] | None = None,
    remote: list[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """The ConfigMap a ``configMapGenerator`` entry makes, without the hash suffix.

    ``namespace`` is used when the entry has none; ``read(path)`` returns the bytes of an
    ``envs``/``files`` path exactly as written in the entry; ``options`` is the
    kustomization's ``generatorOptions``. A source ``read`` refuses with ``RemoteInput`` is
    listed in ``remote`` (``(key, url)``) and its value left empty. Use :func:`generator_behavior`,
    :func:`needs_hash` and :func:`apply_hash_suffix` for the rest.
    """
    what = "configMapGenerator"
    obj = _base("ConfigMap", args, namespace, what)
    opts = merged_options(args, options)
    data = _data_map(obj["metadata"]["name"], _load_pairs(args, read or _no_reader, what, remote))
    text: dict[str, str] = {}
    binary: dict[str, str] = {}
    for k in sorted(data):
        v = data[k]
        if isinstance(v, bytes):
            try:
                text[k] = v.decode("utf-8")
            except UnicodeDecodeError:
                binary[k] = _b64(v)
        else:
            text[k] = v
    if text:
        obj["data"] = text
    if binary:
        obj["binaryData"] = binary
    if opts["immutable"]:
        obj["immutable"] = True
    return _finish(obj, opts)


def secret_from_args(
    args: Mapping[str, Any],
    namespace: str | None = None,
    read: Reader | None = None,
    options: Mapping[str, Any] | None = None,
    remote: list[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """The Secret a ``secretGenerator`` entry makes (values base64-encoded), no hash suffix.
    ``remote`` as for :func:`configmap_from_args`."""
    what = "secretGenerator"
    obj = _base("Secret", args, namespace, what)
    stype = _opt_str(args, "type", what) or "Opaque"
    opts = merged_options(args, options)
    obj["type"] = stype
    data = _data_map(obj["metadata"]["name"], _load_pairs(args, read or _no_reader, what, remote))
    if data:
        obj["data"] = {k: _b64(data[k]) for k in sorted(data)}
    if opts["immutable"]:
        obj["immutable"] = True
    return _finish(obj, opts)


def _no_reader(path: str) -> bytes:
    raise KustomizeError(f"cannot read {path}: no file reader given")


# --------------------------------------------------------------------------------------
# behavior: merge / replace


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def _text_map(v: Any) -> dict[str, str]:
    if not isinstance(v, Mapping):
        return {}
    return {str(k): scalar_text(x) for k, x in v.items()}


def merge_generated(old: Mapping[str, Any], new: Mapping[str, Any], behavior: str) -> dict[str, Any]:
    """Combine a generated object with the one it merges into or replaces.

    As kustomize's ``appendReplaceOrMerge``: the result is ``new`` with labels and
    annotations merged over ``old``'s (``new`` wins), ``old``'s name and namespace, and for
    ``merge`` also ``old``'s ``data``/``binaryData`` keys that ``new`` lacks. Everything else
    (Secret ``type``, ``immutable``) comes from ``new``. The result needs a hash suffix only
    if both ``old`` and ``new`` did (checked against ``kubectl kustomize``).
    """
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        raise KustomizeError("merge_generated needs two mappings")
    if behavior not in ("merge", "replace"):
        raise KustomizeError(f"behavior must be merge or replace, not {behavior!r}")
    res = _copy(dict(new))
    old_meta = old.get("metadata")
    old_md: Mapping[str, Any] = old_meta if isinstance(old_meta, Mapping) else {}
    md = res.get("metadata")
    if not isinstance(md, dict):
        md = {}
        res["metadata"] = md
    for field in ("labels", "annotations"):
        merged = {**_text_map(old_md.get(field)), **_text_map(md.get(field))}
        md.pop(field, None)
        if merged:
            md[field] = {k: merged[k] for k in sorted(merged)}
    name = old_md.get("name")
    if name is None:
        md.pop("name", None)
    else:
        md["name"] = name
    ns = old_md.get("namespace")
    if isinstance(ns, str) and ns:
        md["namespace"] = ns
    else:
        md.pop("namespace", None)
    if behavior == "merge":
        for field in ("data", "binaryData"):
            merged = {**_text_map(old.get(field)), **_text_map(res.get(field))}
            res.pop(field, None)
            if merged:
                res[field] = {k: merged[k] for k in sorted(merged)}
    return res


# --------------------------------------------------------------------------------------
# hashing


def _encode_hash(hexdigest: str) -> str:
    out = []
    for c in hexdigest[:10]:
        out.append({"0": "g", "1": "h", "3": "k", "a": "m", "e": "t"}.get(c, c))
    return "".join(out)


_GO_ESC = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _go_string(s: str) -> str:
    parts = ['"']
    for ch in s:
        e = _GO_ESC.get(ch)
        if e is not None:
            parts.append(e)
        elif ch < " ":
            parts.append(f"\\u{ord(ch):04x}")
        elif "\ud800" <= ch <= "\udfff":
            parts.append("\ufffd")
        else:
            parts.append(ch)
    parts.append('"')
    return "".join(parts)


def _go_float(f: float) -> str:
    if f != f or f in (float("inf"), float("-inf")):
        raise KustomizeError(f"json: unsupported value: {f!r}")
    if f == 0:
        return "-0" if str(f).startswith("-") else "0"
    d = decimal.Decimal(repr(f))
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    # value = 0.ds * 10**point
    point = len(digits) + exp
    neg = "-" if sign else ""
    a = abs(f)
    if a < 1e-6 or a >= 1e21:
        e = point - 1
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        out = f"{neg}{mant}e{'-' if e < 0 else '+'}{abs(e):02d}"
        if e < 0 and abs(e) < 10:  # encoding/json turns e-07 into e-7
            out = out.replace("e-0", "e-", 1)
        return out
    if point <= 0:
        return f"{neg}0.{'0' * -point}{ds}"
    if point >= len(ds):
        return f"{neg}{ds}{'0' * (point - len(ds))}"
    return f"{neg}{ds[:point]}.{ds[point:]}"


def _go_json(v: Any, depth: int = 0) -> str:
    """encoding/json.Marshal of data that went through a JSON round trip
    (numbers become float64, map keys sorted)."""
    if depth > 1000:
        raise KustomizeError("value nested too deeply to hash")
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return _go_string(v)
    if isinstance(v, int):
        try:
            return _go_float(float(v))
        except OverflowError:
            raise KustomizeError(f"number {v} is out of range") from None
    if isinstance(v, float):
        return _go_float(v)
    if isinstance(v, Mapping):
        keys = sorted((k if isinstance(k, str) else scalar_text(k), k) for k in v)
        return "{" + ",".join(_go_string(ks) + ":" + _go_json(v[k], depth + 1) for ks, k in keys) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_go_json(x, depth + 1) for x in v) + "]"
    return _go_string(str(v))


def _node_value(obj: Mapping[str, Any], key: str) -> Any:
    """hasher.getNodeValues for one single-element path."""
    if key not in obj:
        return ""
    v = obj[key]
    if isinstance(v, Mapping):
        return v
    if isinstance(v, list):
        return None  # json.Unmarshal of an array into a map fails, leaving a nil map
    if v is None:
        return "null"
    return scalar_text(v)


def name_hash(obj: Mapping[str, Any]) -> str:
    """kustomize's content hash (the ``-xxxxxxxxxx`` suffix) of a ConfigMap or Secret.

    Other kinds are hashed from their full canonical JSON, which is *not* what kustomize
    does (it marshals its internal YAML node, line numbers included) -- kustomize only
    hashes generated ConfigMaps and Secrets in practice.
    """
    if not isinstance(obj, Mapping):
        raise KustomizeError(f"cannot hash a {type(obj).__name__}")
    kind = obj.get("kind")
    m: dict[str, Any]
    if kind == "ConfigMap":
        m = {"kind": "ConfigMap", "name": _node_value(obj, "metadata/name"), "data": _node_value(obj, "data")}
        bd = _node_value(obj, "binaryData")
        if bd is None or isinstance(bd, Mapping):
            m["binaryData"] = bd
    elif kind == "Secret":
        m = {
            "kind": "Secret",
            "type": _node_value(obj, "type"),
            "name": _node_value(obj, "metadata/name"),
            "data": _node_value(obj, "data"),
        }
        sd = _node_value(obj, "stringData")
        if sd is None or isinstance(sd, Mapping):
            m["stringData"] = sd
    else:
        m = dict(obj)
    try:
        encoded = _go_json(m).encode("utf-8")
    except RecursionError:
        raise KustomizeError("value nested too deeply to hash") from None
    return _encode_hash(hashlib.sha256(encoded).hexdigest())


def apply_hash_suffix(obj: Mapping[str, Any], disable_name_suffix_hash: bool = False) -> dict[str, Any]:
    """A copy of ``obj`` whose ``metadata.name`` has ``-<name_hash(obj)>`` appended (an
    unchanged copy when ``disable_name_suffix_hash``)."""
    if not isinstance(obj, Mapping):
        raise KustomizeError(f"cannot hash a {type(obj).__name__}")
    out = _copy(dict(obj))
    if disable_name_suffix_hash:
        return out
    h = name_hash(obj)
    md = out.get("metadata")
    if not isinstance(md, dict):
        if md is not None:
            raise KustomizeError("metadata must be a mapping")
        md = {}
        out["metadata"] = md
    name = md.get("name")
    if name is not None and not isinstance(name, str):
        raise KustomizeError(f"metadata.name must be a string, not {type(name).__name__}")
    md["name"] = f"{name or ''}-{h}"
    return out
