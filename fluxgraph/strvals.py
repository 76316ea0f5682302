"""Helm's ``--set`` parser (``helm.sh/helm/v4/pkg/strvals``), for the values helm-controller
merges at a ``valuesFrom[].targetPath``.

fluxcd/pkg ``chartutil`` ``ChartValuesFromReferences`` (chartutil/v1.28.0, chartutil/values.go)
merges a ``valuesFrom`` entry that has a ``targetPath`` as the command line ``--set
<targetPath>=<value>`` would: ``ReplacePathValue`` hands ``path + "=" + value`` to
``strvals.ParseInto`` (typed values), or to ``strvals.ParseIntoString`` when the value is
wrapped in single or double quotes (which ``strings.Trim`` strips); ``ReplacePathLiteralValue``
(``literal: true``, helm-controller v1.6, Flux 2.9) first escapes ``\\ , [ ] { }`` in the value, so
that only the path is parsed. The value is therefore a ``--set`` line: an unescaped comma ends it
and starts another ``key=value``, a leading ``{`` makes a list, a backslash escapes the next
character and is dropped.

This module is a port of the parts of strvals.go that those two functions reach (the plain
and string parsers, not the JSON or file ones), including the errors it returns and the
panics it recovers into errors (a path through an existing value of another type). Nothing is
executed: it is a parser over the string.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_INDEX = 65536  # strvals MaxIndex
MAX_NESTED_NAME_LEVEL = 30  # strvals MaxNestedNameLevel
_ATOI = re.compile(r"[+-]?[0-9]+")


class StrvalsError(Exception):
    """What strvals returns as an error; its text is Helm's where Helm's is known."""


class _EOF(Exception):
    """io.EOF inside the parser: the end of the line, not an error of ``parse``."""


class _NotList(Exception):
    """strvals ErrNotList: the value does not start with ``{``."""


def _q(s: str) -> str:
    """Go's ``%q`` of a string, for the common characters."""
    return json.dumps(s, ensure_ascii=False)


def _go_type(v: Any) -> str:
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "[]interface {}"
    if isinstance(v, dict):
        return "map[string]interface {}"
    return type(v).__name__


def _conversion_panic(v: Any, want: str) -> StrvalsError:
    # key(): the recovered panic of a type assertion on the existing value
    if v is None:
        return StrvalsError(f"unable to parse key: interface conversion: interface is nil, not {want}")
    return StrvalsError(f"unable to parse key: interface conversion: interface {{}} is {_go_type(v)}, not {want}")


class _Parser:
    def __init__(self, line: str, data: dict[str, Any], string_values: bool) -> None:
        self.s = line
        self.i = 0
        self.data = data
        self.string_values = string_values

    # -- scanner (bytes.Buffer ReadRune / UnreadRune)
    def _read(self) -> str | None:
        if self.i >= len(self.s):
            return None
        c = self.s[self.i]
        self.i += 1
        return c

    def _unread(self) -> None:
        self.i -= 1

    def _until(self, stop: str) -> tuple[str, str | None]:
        """runesUntil: the runes up to one of ``stop`` (consumed, returned as ``last``), a
        backslash taking the next rune literally; raises _EOF (with what was read) at the end."""
        out: list[str] = []
        while True:
            c = self._read()
            if c is None:
                raise _EOFWith("".join(out))
            if c in stop:
                return "".join(out), c
            if c == "\\":
                n = self._read()
                if n is None:
                    raise _EOFWith("".join(out))
                out.append(n)
            else:
                out.append(c)

    def _typed(self, v: str) -> Any:
        """typedVal: true/false/null and integers without a leading zero, unless string values."""
        if self.string_values:
            return v
        low = v.lower()
        if low == "true":
            return True
        if low == "false":
            return False
        if low == "null":
            return None
        if v == "0":
            return 0
        if v and v[0] != "0":
            try:
                n = int(v, 10)
            except ValueError:
                return v
            if v.strip() == v and "_" not in v and -(2**63) <= n < 2**63:
                return n
        return v

    # -- grammar
    def parse(self) -> None:
        while True:
            try:
                self._key(self.data, 0)
            except _EOF:
                return

    def _key(self, data: dict[str, Any], level: int) -> None:
        try:
            k, last = self._until("=[,.")
        except _EOFWith as e:
            if not e.read:
                raise _EOF() from None
            raise StrvalsError(f"key {_q(e.read)} has no value") from None
        if last == "[":
            i = self._key_index()
            lst: list[Any] = []
            if k in data:
                if not isinstance(data[k], list):
                    raise _conversion_panic(data[k], "[]interface {}")
                lst = data[k]
            try:
                lst = self._list_item(lst, i, level)
            finally:
                _set(data, k, lst)
            return
        if last == "=":
            try:
                vl = self._val_list()
            except _EOF:
                _set(data, k, "")
                raise
            except _NotList:
                # val() at the end of the line: strvals discards the EOF there (the reader's nil
                # error replaces it), and the next key() ends the parse
                _set(data, k, self._typed(self._val()))
                return
            _set(data, k, vl)
            return
        if last == ",":
            _set(data, k, "")
            raise StrvalsError(f"key {_q(k)} has no value (cannot end with ,)")
        # last == "."
        level += 1
        if level > MAX_NESTED_NAME_LEVEL:
            raise StrvalsError(f"value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}")
        inner: dict[str, Any] = {}
        if k in data:
            if not isinstance(data[k], dict):
                raise _conversion_panic(data[k], "map[string]interface {}")
            inner = data[k]
        try:
            self._key(inner, level)
        except BaseException:
            if inner:
                _set(data, k, inner)
            raise
        if not inner:
            raise StrvalsError(f"key map {_q(k)} has no value")
        _set(data, k, inner)

    def _key_index(self) -> int:
        try:
            v, _ = self._until("]")
        except _EOFWith:
            raise _EOF() from None
        if not _ATOI.fullmatch(v):
            raise StrvalsError(f"error parsing index: strconv.Atoi: parsing {_q(v)}: invalid syntax")
        return int(v)

    def _list_item(self, lst: list[Any], i: int, level: int) -> list[Any]:
        if i < 0:
            raise StrvalsError(f"negative {i} index not allowed")
        try:
            k, last = self._until("[.=")
        except _EOFWith as e:
            if e.read:
                raise StrvalsError(f"unexpected data at end of array index: {_q(e.read)}") from None
            raise _EOF() from None
        if k:
            raise StrvalsError(f"unexpected data at end of array index: {_q(k)}")
        if last == "=":
            try:
                vl: Any = self._val_list()
            except _EOF:
                return _set_index(lst, i, "")
            except _NotList:
                return _set_index(lst, i, self._typed(self._val()))
            return _set_index(lst, i, vl)
        if last == "[":
            nxt = self._key_index()
            crt: list[Any] = []
            if len(lst) > i and lst[i] is not None:
                if not isinstance(lst[i], list):
                    raise _conversion_panic(lst[i], "[]interface {}")
                crt = lst[i]
            return _set_index(lst, i, self._list_item(crt, nxt, level))
        # last == "."
        inner: dict[str, Any] = {}
        if len(lst) > i:
            if isinstance(lst[i], dict):
                inner = lst[i]
            else:
                lst[i] = inner
        self._key(inner, level)
        return _set_index(lst, i, inner)

    def _val(self) -> str:
        try:
            v, _ = self._until(",")
        except _EOFWith as e:
            return e.read
        return v

    def _val_list(self) -> list[Any]:
        c = self._read()
        if c is None:
            raise _EOF()
        if c != "{":
            self._unread()
            raise _NotList()
        out: list[Any] = []
        while True:
            try:
                rs, last = self._until(",}")
            except _EOFWith:
                raise StrvalsError("list must terminate with '}'") from None
            out.append(self._typed(rs))
            if last == "}":
                n = self._read()
                if n is not None and n != ",":
                    self._unread()
                return out


class _EOFWith(Exception):
    def __init__(self, read: str) -> None:
        super().__init__(read)
        self.read = read


def _set(data: dict[str, Any], key: str, val: Any) -> None:
    if key:
        data[key] = val


def _set_index(lst: list[Any], i: int, val: Any) -> list[Any]:
    if i < 0:
        raise StrvalsError(f"negative {i} index not allowed")
    if i > MAX_INDEX:
        raise StrvalsError(f"index of {i} is greater than maximum supported index of {MAX_INDEX}")
    if len(lst) <= i:
        lst = lst + [None] * (i + 1 - len(lst))
    lst[i] = val
    return lst


def parse_into(line: str, dest: dict[str, Any], *, string_values: bool = False) -> None:
    """``strvals.ParseInto`` (``string_values``: ``ParseIntoString``): merge the ``--set`` line
    into ``dest``; raises StrvalsError with Helm's message where Helm fails."""
    try:
        _Parser(line, dest, string_values).parse()
    except RecursionError:
        raise StrvalsError("value name nested too deeply") from None


_ESCAPES = str.maketrans({"\\": "\\\\", ",": "\\,", "[": "\\[", "]": "\\]", "{": "\\{", "}": "\\}"})


def replace_path_value(values: dict[str, Any], path: str, value: str, *, literal: bool = False) -> None:
    """fluxcd/pkg chartutil ``ReplacePathValue`` / ``ReplacePathLiteralValue``: merge ``value``
    at the ``--set`` path ``path`` of ``values`` as helm-controller does."""
    if literal:
        parse_into(f"{path}={value.translate(_ESCAPES)}", values, string_values=True)
        return
    if (value.startswith("'") and value.endswith("'")) or (value.startswith('"') and value.endswith('"')):
        parse_into(f"{path}={value.strip(chr(39) + chr(34))}", values, string_values=True)
        return
    parse_into(f"{path}={value}", values)
