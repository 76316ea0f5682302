"""RFC 6902 JSON patches as kustomize applies them.

Follows ``api/filters/patchjson6902/patchjson6902.go``, which hands the resource, as JSON,
to ``github.com/evanphx/json-patch/v5`` with its default options. That library's
behaviour, checked against ``kubectl kustomize`` (kustomize v5.5), differs from the letter
of RFC 6902 in ways real patches rely on, and is reproduced here:

* array indexes are parsed like Go's ``strconv.Atoi`` (``01`` and ``+1`` are 1) and may be
  negative (``SupportNegativeIndices``): for ``add`` ``-1`` appends and ``-len-1`` prepends;
  for ``remove``/``replace`` ``-1`` is the last element; ``-`` appends for ``add`` only;
* ``replace`` of a missing *object member* adds it (only a missing array index fails);
* ``copy`` from a missing object member copies ``null``; ``add`` without ``value`` adds
  ``null``; ``test`` of a missing member passes when the expected value is ``null``;
* a path is split at ``/`` and its first segment dropped, so ``data/x`` means ``/x``; the
  whole document (path ``""``) can be replaced (by an object or array: any other value
  is silently ignored) or tested, but not added to or removed;
* ``test`` compares JSON values exactly: ``1`` is not ``1.0``;
* kustomize's internal annotations make ``metadata.annotations`` exist during the patch
  (see :func:`apply_json6902`).

Errors are :class:`KustomizeError` naming the operation index, kind and path.
"""

from __future__ import annotations

import datetime
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import YAMLError

from fluxgraph.kustomize._copy import CopyBudget
from fluxgraph.kustomize.errors import KustomizeError
from fluxgraph.kustomize.selector import scalar_text

__all__ = ["apply_json6902", "parse_ops"]

_MISSING: Any = object()

# Bounds on untrusted input (docs/security.md): ``copy`` doubles a subtree per operation and
# ``add`` can nest one level per operation, so one patch application may copy at most
# MAX_COPIED_NODES values and leave the object at most MAX_DEPTH levels deep; the patch text
# itself is loaded with the same alias-expansion bound as every other YAML file.
MAX_COPIED_NODES = 1_000_000
MAX_DEPTH = 256


class _Fail(Exception):
    pass


class _StrTimestampConstructor(SafeConstructor):
    """Safe constructor that leaves timestamps as strings (yaml.v2 into interface{} does)."""


_StrTimestampConstructor.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)


def _loader() -> YAML:
    y = YAML(typ="safe")
    y.Constructor = _StrTimestampConstructor
    return y


def _plain(v: Any, depth: int = 0, count: list[int] | None = None) -> Any:
    """Coerce loader output to JSON-like data (str keys, no dates/bytes/sets).

    ``count`` bounds the values produced: the loader shares aliased nodes, so a small text can
    stand for an exponential tree ("billion laughs")."""
    if depth > 500:
        raise KustomizeError("JSON 6902 patch is nested too deeply")
    if count is None:
        count = [0]
    count[0] += 1
    if count[0] > MAX_COPIED_NODES:
        raise KustomizeError(f"JSON 6902 patch expands to more than {MAX_COPIED_NODES} values (alias expansion)")
    if isinstance(v, dict):
        return {(k if isinstance(k, str) else _key_text(k)): _plain(x, depth + 1, count) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x, depth + 1, count) for x in v]
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def _key_text(k: Any) -> str:
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    return str(k)


def parse_ops(ops: Any) -> list[Any]:
    """The operation list of a JSON 6902 patch given as a list or as YAML/JSON text."""
    if isinstance(ops, bytes):
        try:
            ops = ops.decode("utf-8")
        except UnicodeDecodeError:
            raise KustomizeError("JSON 6902 patch is not valid UTF-8") from None
    if isinstance(ops, str):
        try:
            docs = list(_loader().load_all(ops))
        except (YAMLError, ValueError, TypeError, RecursionError) as e:
            raise KustomizeError(f"cannot parse JSON 6902 patch: {e}") from None
        docs = [d for d in docs if d is not None]
        if len(docs) != 1:
            raise KustomizeError(
                "JSON 6902 patch must be one YAML/JSON document holding a list of operations"
            )
        ops = _plain(docs[0])
    if not isinstance(ops, list):
        raise KustomizeError(f"JSON 6902 patch must be a list of operations, not {type(ops).__name__}")
    return ops


# --------------------------------------------------------------------------------------


def _budget(limit: float = MAX_COPIED_NODES) -> CopyBudget:
    """What the copies of one patch application may make."""
    return CopyBudget(limit, "JSON 6902 patch", MAX_DEPTH)


def _copy(v: Any) -> Any:
    return _budget(float("inf")).copy(v)


def _too_deep(doc: Any) -> bool:
    stack = [(doc, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = v.values() if isinstance(v, dict) else v
        stack.extend((x, depth + 1) for x in children if isinstance(x, (dict, list)))
    return False


def _atoi(key: str) -> int:
    """Go strconv.Atoi: optional sign then ASCII digits, within int64."""
    body = key[1:] if key[:1] in ("+", "-") else key
    if not body or not body.isascii() or not body.isdigit():
        raise _Fail(f"value was not a proper array index: '{key}'")
    v = int(key)
    if not -(2**63) <= v < 2**63:
        raise _Fail(f"value was not a proper array index: '{key}'")
    return v


def _decode_key(k: str) -> str:
    return k.replace("~1", "/").replace("~0", "~")


def _find(doc: Any, path: str) -> tuple[Any, str] | None:
    """json-patch's findObject: the container holding the last segment, and that segment."""
    split = path.split("/")
    if len(split) < 2:
        return None
    cur = doc
    for part in split[1:-1]:
        nxt = _get(cur, _decode_key(part))
        if not isinstance(nxt, (dict, list)):
            return None
        cur = nxt
    return cur, _decode_key(split[-1])


def _get(con: Any, key: str) -> Any:
    """Container get: missing object member -> _MISSING; bad array index -> _Fail."""
    if isinstance(con, dict):
        return con.get(key, _MISSING)
    if isinstance(con, list):
        try:
            idx = _atoi(key)
        except _Fail:
            return _MISSING
        n = len(con)
        if idx < 0:
            if idx < -n:
                return _MISSING
            idx += n
        if idx >= n:
            return _MISSING
        return con[idx]
    return _MISSING


def _existing_index(key: str, n: int) -> int:
    """The index ``key`` names in an array of ``n`` elements, negative counting from the end;
    out of range raises (json-patch partialArray.get and .set)."""
    idx = _atoi(key)
    if idx < -n or idx >= n:
        raise _Fail(f"Unable to access invalid index: {idx}: invalid index referenced")
    return idx + n if idx < 0 else idx


def _get_strict(con: Any, key: str) -> Any:
    """Like _get but array errors raise (json-patch partialArray.get)."""
    if isinstance(con, list):
        return con[_existing_index(key, len(con))]
    return _get(con, key)


def _add(con: Any, key: str, val: Any) -> None:
    if isinstance(con, dict):
        con[key] = val
        return
    if key == "-":
        con.append(val)
        return
    idx = _atoi(key)
    size = len(con) + 1
    if idx >= size:
        raise _Fail(f"Unable to access invalid index: {idx}: invalid index referenced")
    if idx < 0:
        if idx < -size:
            raise _Fail(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += size
    con.insert(idx, val)


def _set(con: Any, key: str, val: Any) -> None:
    if isinstance(con, dict):
        con[key] = val
        return
    con[_existing_index(key, len(con))] = val


def _remove(con: Any, key: str) -> None:
    if isinstance(con, dict):
        if key not in con:
            raise _Fail(f"Unable to remove nonexistent key: {key}: missing value")
        del con[key]
        return
    idx = _atoi(key)
    n = len(con)
    if idx >= n:
        raise _Fail(f"Unable to access invalid index: {idx}: invalid index referenced")
    if idx < 0:
        if idx < -n:
            raise _Fail(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += n
    del con[idx]


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if type(a) is not type(b):
        return False
    return bool(a == b)


def _str_field(op: dict[str, Any], name: str, kind: str) -> str:
    v = op.get(name, _MISSING)
    if v is _MISSING or v is None:
        raise _Fail(f"{kind} operation failed to decode {name}: missing value")
    if not isinstance(v, str):
        raise _Fail(f"{kind} operation failed to decode {name}: {name} must be a string")
    return v


def _apply_one(doc: Any, op: dict[str, Any], budget: CopyBudget | None = None) -> Any:
    copy = (budget or _budget()).copy  # every copy of one application is charged to its budget
    kind = op.get("op")
    if not isinstance(kind, str):
        kind = "unknown"
    if kind == "add":
        path = _str_field(op, "path", kind)
        found = _find(doc, path)
        if found is None:
            raise _Fail(f'add operation does not apply: doc is missing path: "{path}": missing value')
        _add(found[0], found[1], copy(op.get("value")))
        return doc
    if kind == "remove":
        path = _str_field(op, "path", kind)
        found = _find(doc, path)
        if found is None:
            raise _Fail(f'remove operation does not apply: doc is missing path: "{path}": missing value')
        _remove(found[0], found[1])
        return doc
    if kind == "replace":
        path = _str_field(op, "path", kind)
        val = copy(op.get("value"))
        if path == "":
            # json-patch wraps a nil error for a value that is neither object nor array,
            # so such a replace silently does nothing
            return val if isinstance(val, (dict, list)) else doc
        found = _find(doc, path)
        if found is None:
            raise _Fail(f"replace operation does not apply: doc is missing path: {path}: missing value")
        con, key = found
        if isinstance(con, list) and _get(con, key) is _MISSING:
            raise _Fail(f"replace operation does not apply: doc is missing key: {path}: missing value")
        _set(con, key, val)
        return doc
    if kind in ("move", "copy"):
        frm = _str_field(op, "from", kind)
        found = _find(doc, frm)
        if found is None:
            raise _Fail(f"{kind} operation does not apply: doc is missing from path: {frm}: missing value")
        con, key = found
        val = _get_strict(con, key)
        if kind == "move":
            _remove(con, key)
        else:
            val = None if val is _MISSING else copy(val)
        if val is _MISSING:
            val = None
        path = _str_field(op, "path", kind)
        found = _find(doc, path)
        if found is None:
            raise _Fail(
                f"{kind} operation does not apply: doc is missing destination path: {path}: missing value"
            )
        _add(found[0], found[1], val)
        return doc
    if kind == "test":
        path = _str_field(op, "path", kind)
        if "value" not in op:  # json-patch dereferences the missing value (kustomize panics)
            raise _Fail("test operation has no value")
        want = op["value"]
        if path == "":
            if _json_equal(doc, want):
                return doc
            raise _Fail(f"testing value {path} failed: test failed")
        found = _find(doc, path)
        if found is None:
            raise _Fail(f"test operation does not apply: is missing path: {path}: missing value")
        have = _get_strict(found[0], found[1])
        if have is _MISSING or have is None:
            if want is None:
                return doc
            raise _Fail(f"testing value {path} failed: test failed")
        if want is None or not _json_equal(have, want):
            raise _Fail(f"testing value {path} failed: test failed")
        return doc
    raise _Fail(f"Unexpected kind: {kind}")


def apply_json6902(target: dict[str, Any], ops: Any, *, internal_annotations: bool = True) -> dict[str, Any]:
    """Apply a JSON 6902 patch (a list of operations, or its YAML/JSON text) to ``target``.

    Returns a new object; ``target`` and ``ops`` are not modified.

    During a kustomize build every resource carries internal bookkeeping annotations, so
    ``metadata.annotations`` always exists when a JSON patch runs: ``add
    /metadata/annotations/x`` works on an object that has no annotations. With
    ``internal_annotations`` (the default) an empty ``metadata.annotations`` is provided
    for the patch and dropped again afterwards if it is still empty, and scalar annotation
    values are turned into strings (``true`` -> ``"true"``, null -> ``"null"``, a map or
    list -> ``""``), as kustomize's annotation bookkeeping does.
    """
    if not isinstance(target, dict):
        raise KustomizeError(f"JSON 6902 patch target must be a mapping, not {type(target).__name__}")
    op_list = parse_ops(ops)
    budget = _budget()
    doc: Any = _copy(target)
    md = doc.get("metadata")
    added_annotations = internal_annotations and isinstance(md, dict) and "annotations" not in md
    if added_annotations:
        md["annotations"] = {}
    for i, op in enumerate(op_list):
        if not isinstance(op, dict):
            raise KustomizeError(
                f"JSON 6902 op #{i}: an operation must be a mapping, not {type(op).__name__}"
            )
        try:
            doc = _apply_one(doc, op, budget)
        except _Fail as e:
            kind = op.get("op")
            path = op.get("path")
            raise KustomizeError(
                f"JSON 6902 op #{i} ({kind if isinstance(kind, str) else '?'} "
                f"{path if isinstance(path, str) else '?'}): {e}"
            ) from None
        except RecursionError:
            raise KustomizeError(f"JSON 6902 op #{i}: value nested too deeply") from None
    if not isinstance(doc, dict):
        raise KustomizeError("JSON 6902 patch replaced the object with a non-object")
    if op_list and _too_deep(doc):  # `add` can nest one level per operation without copying
        raise KustomizeError(f"JSON 6902 patch nests the object deeper than {MAX_DEPTH} levels")
    if internal_annotations:
        md = doc.get("metadata")
        if isinstance(md, dict):
            ann = md.get("annotations")
            if added_annotations and ann == {}:
                del md["annotations"]
            elif isinstance(ann, dict):
                for k, v in ann.items():
                    if not isinstance(v, str):
                        ann[k] = "null" if v is None else scalar_text(v)
    return doc
