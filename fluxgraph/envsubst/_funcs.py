"""Go-exact ports of fluxcd/pkg ``envsubst/funcs.go`` and of the glob matcher it uses.

Go strings are byte strings: ``len``, substring offsets and the trim loops
count UTF-8 bytes, and slicing can cut a character in half.  These functions
therefore work on the UTF-8 bytes of their arguments.  A value with a
cut-up character is carried as a ``str`` holding ``surrogateescape`` code
points (``\\udc80``-``\\udcff``, one per stray byte), so that
``value.encode("utf-8", "surrogateescape")`` gives back Go's exact bytes.
Where Go decodes such bytes as runes (``[]rune``, ``strings.Map``,
``utf8.DecodeRuneInString``) they become U+FFFD, as in Go.

The glob matcher is ``envsubst/path/match.go``, drone/envsubst's copy of Go's
``path.Match`` in which ``*`` and ``?`` also match ``/``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

__all__ = ["GoPanic", "go_atoi", "glob_match", "lookup_func", "normalize_bytes"]

SubstituteFunc = Callable[[str, Sequence[str]], str]

_MAX_INT64: Final = (1 << 63) - 1
_MIN_INT64: Final = -(1 << 63)
_RUNE_ERROR: Final = 0xFFFD


# --------------------------------------------------------------------- bytes <-> str


def _b(s: str) -> bytes:
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that did not come from us
        return s.encode("utf-8", "surrogatepass")


def _s(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _has_stray_bytes(s: str) -> bool:
    return not s.isascii() and any("\udc80" <= c <= "\udcff" for c in s)


def normalize_bytes(s: str) -> str:
    """Canonical form of a value that may hold stray bytes: decode its bytes again,
    so that strays which together form a valid character become that character."""
    if _has_stray_bytes(s):
        return _s(_b(s))
    return s


def _replace(s: str, old: str, new: str, count: int) -> str:
    """``strings.Replace``: byte-level when stray bytes are involved."""
    if old and (_has_stray_bytes(s) or _has_stray_bytes(old)):
        return _s(_b(s).replace(_b(old), _b(new), count))
    return normalize_bytes(s.replace(old, new, count)) if not new.isascii() else s.replace(old, new, count)


def _has_prefix(s: str, p: str) -> bool:
    if _has_stray_bytes(s) or _has_stray_bytes(p):
        return _b(s).startswith(_b(p))
    return s.startswith(p)


def _has_suffix(s: str, p: str) -> bool:
    if _has_stray_bytes(s) or _has_stray_bytes(p):
        return _b(s).endswith(_b(p))
    return s.endswith(p)


def _runes(s: str) -> str:
    """``string([]rune(s))``: every stray byte becomes U+FFFD."""
    if _has_stray_bytes(s):
        return "".join("\ufffd" if "\udc80" <= c <= "\udcff" else c for c in s)
    return s


def _decode_rune(b: bytes, i: int) -> tuple[int, int]:
    """``utf8.DecodeRune(b[i:])``: (rune, width); invalid input gives (RuneError, 1)."""
    c = b[i]
    if c < 0x80:
        return c, 1
    if 0xC2 <= c <= 0xDF:
        n = 2
    elif 0xE0 <= c <= 0xEF:
        n = 3
    elif 0xF0 <= c <= 0xF4:
        n = 4
    else:
        return _RUNE_ERROR, 1
    try:
        return ord(b[i : i + n].decode("utf-8")), n
    except UnicodeDecodeError:
        return _RUNE_ERROR, 1


# --------------------------------------------------------------------- Go helpers


class GoPanic(Exception):
    """The Go code would panic (a runtime error, not an envsubst error)."""


def go_atoi(s: str) -> int | None:
    """``strconv.Atoi`` (64-bit): ASCII digits with an optional sign, nothing else; None on error."""
    if not s or not s.isascii():
        return None
    body = s[1:] if s[0] in "+-" else s
    if not body or not body.isdigit():
        return None
    n = int(s)
    if n < _MIN_INT64 or n > _MAX_INT64:
        return None
    return n


_UPPER_CACHE: dict[str, str] = {}
_LOWER_CACHE: dict[str, str] = {}


def _go_upper_rune(c: str) -> str:
    """``unicode.ToUpper``: the simple (one-to-one) case mapping."""
    r = _UPPER_CACHE.get(c)
    if r is None:
        if "\udc80" <= c <= "\udcff":
            r = "\ufffd"
        else:
            u = c.upper()
            if len(u) != 1:
                # Python applies the full (SpecialCasing) mapping; for the few
                # characters that also have a simple mapping it equals the
                # title-case form (e.g. U+1FB3 -> U+1FBC), otherwise Go keeps c.
                t = c.title()
                u = t if len(t) == 1 else c
            r = u
        _UPPER_CACHE[c] = r
    return r


def _go_lower_rune(c: str) -> str:
    """``unicode.ToLower``: the simple (one-to-one) case mapping."""
    r = _LOWER_CACHE.get(c)
    if r is None:
        if "\udc80" <= c <= "\udcff":
            r = "\ufffd"
        elif c == "\u0130":  # LATIN CAPITAL LETTER I WITH DOT ABOVE: full "i̇", simple "i"
            r = "i"
        else:
            low = c.lower()
            r = low if len(low) == 1 else c
        _LOWER_CACHE[c] = r
    return r


# --------------------------------------------------------------------- funcs.go


def to_len(s: str, args: Sequence[str]) -> str:
    return str(len(s) if s.isascii() else len(_b(s)))


def to_lower(s: str, args: Sequence[str]) -> str:
    if s.isascii():
        return s.lower()
    return "".join(_go_lower_rune(c) for c in s)


def to_upper(s: str, args: Sequence[str]) -> str:
    if s.isascii():
        return s.upper()
    return "".join(_go_upper_rune(c) for c in s)


def to_lower_first(s: str, args: Sequence[str]) -> str:
    if s == "":
        return s
    return _go_lower_rune(s[0]) + s[1:]


def to_upper_first(s: str, args: Sequence[str]) -> str:
    if s == "":
        return s
    return _go_upper_rune(s[0]) + s[1:]


def to_default(s: str, args: Sequence[str]) -> str:
    """Every default-style operator: the value if non-empty, else the arguments joined."""
    if len(s) == 0 and len(args) > 0:
        return normalize_bytes("".join(args))
    return s


def to_substr(s: str, args: Sequence[str]) -> str:
    """``${v:pos}`` / ``${v:pos:len}`` on UTF-8 bytes, negative length as in pkg#1275."""
    if len(args) == 0:
        return s
    pos = go_atoi(args[0])
    if pos is None:
        return s  # "bash returns the string if the position cannot be parsed"
    b = s.encode("ascii") if s.isascii() else _b(s)
    n = len(b)
    if pos < 0:
        pos = max(n + pos, 0)
    if len(args) == 1:
        return _s(b[pos:]) if pos < n else ""
    length = go_atoi(args[1])
    if length is None:
        return s
    if length < 0:
        end = n + length
        if end < pos:
            return ""
        return _s(b[pos:end])
    end = pos + length
    if end > _MAX_INT64:
        # Go's int addition wraps; the negative bound then fails the slice.
        raise GoPanic(f"runtime error: slice bounds out of range [:{end - (1 << 64)}]")
    if end >= n:
        return _s(b[pos:]) if pos < n else ""
    return _s(b[pos:end])


def replace_all(s: str, args: Sequence[str]) -> str:
    if len(args) == 0:
        return s
    return _replace(s, args[0], args[1] if len(args) > 1 else "", -1)


def replace_first(s: str, args: Sequence[str]) -> str:
    if len(args) == 0:
        return s
    return _replace(s, args[0], args[1] if len(args) > 1 else "", 1)


def replace_prefix(s: str, args: Sequence[str]) -> str:
    # Note: with an empty replacement (${v/#p/}) there is only one argument and
    # Go returns the value unchanged.
    if len(args) != 2:
        return s
    if _has_prefix(s, args[0]):
        return _replace(s, args[0], args[1], 1)
    return s


def replace_suffix(s: str, args: Sequence[str]) -> str:
    if len(args) != 2:
        return s
    if _has_suffix(s, args[0]):
        if args[0]:
            s = _s(_b(s)[: -len(_b(args[0]))])
        s = normalize_bytes(s + args[1])
    return s


def _reverse(s: str) -> str:
    return _runes(s)[::-1]


def _trim_shortest(s: bytes, arg: bytes) -> bytes:
    shortest = b""
    n = len(s)
    for i in range(n):
        try:
            m = glob_match(arg, s[: n - i])
        except _BadPattern:
            return s
        if m:
            shortest = s[: n - i]
    if shortest:
        return s[len(shortest) :]
    return s


def _trim_longest(s: bytes, arg: bytes) -> bytes:
    n = len(s)
    for i in range(n):
        try:
            m = glob_match(arg, s[: n - i])
        except _BadPattern:
            return s
        if m:
            return s[n - i :]
    return s


def trim_shortest_prefix(s: str, args: Sequence[str]) -> str:
    if len(args) != 0:
        s = _s(_trim_shortest(_b(s), _b(args[0])))
    return s


def trim_longest_prefix(s: str, args: Sequence[str]) -> str:
    if len(args) != 0:
        s = _s(_trim_longest(_b(s), _b(args[0])))
    return s


def trim_shortest_suffix(s: str, args: Sequence[str]) -> str:
    if len(args) != 0:
        r, rarg = _reverse(s), _reverse(args[0])
        s = _reverse(_s(_trim_shortest(_b(r), _b(rarg))))
    return s


def trim_longest_suffix(s: str, args: Sequence[str]) -> str:
    if len(args) != 0:
        r, rarg = _reverse(s), _reverse(args[0])
        s = _reverse(_s(_trim_longest(_b(r), _b(rarg))))
    return s


_BY_NAME: Final[dict[str, SubstituteFunc]] = {
    ",": to_lower_first,
    ",,": to_lower,
    "^": to_upper_first,
    "^^": to_upper,
    "##": trim_longest_prefix,
    "%": trim_shortest_suffix,
    "%%": trim_longest_suffix,
    ":": to_substr,
    "/#": replace_prefix,
    "/%": replace_suffix,
    "/": replace_first,
    "//": replace_all,
}


def lookup_func(name: str, nargs: int) -> SubstituteFunc:
    """``lookupFunc``: the function for an operator; everything unknown (``""``,
    the default-style operators, ``,^``) is ``toDefault``."""
    if name == "#":
        return to_len if nargs == 0 else trim_shortest_prefix
    return _BY_NAME.get(name, to_default)


# --------------------------------------------------------------------- path/match.go


class _BadPattern(Exception):
    """``path.ErrBadPattern`` ("syntax error in pattern")."""


_STAR, _QUEST, _LBRACK, _RBRACK, _BSLASH, _CARET, _DASH = (ord(c) for c in "*?[]\\^-")


def glob_match(pattern: bytes, name: bytes) -> bool:
    """``path.Match`` of envsubst/path: a trailing ``*`` matches the rest of the
    name and ``*`` may cross ``/``.  Raises :class:`_BadPattern` where Go
    returns ``ErrBadPattern`` (only when matching reaches the bad part)."""
    while pattern:
        star, chunk, pattern = _scan_chunk(pattern)
        if star and not chunk:
            return True
        t, ok, err = _match_chunk(chunk, name)
        if ok and (len(t) == 0 or len(pattern) > 0):
            name = t
            continue
        if err:
            raise _BadPattern
        if star:
            for i in range(len(name)):
                t, ok, err = _match_chunk(chunk, name[i + 1 :])
                if ok:
                    if len(pattern) == 0 and len(t) > 0:
                        continue
                    name = t
                    break
                if err:
                    raise _BadPattern
            else:
                return False
            continue
        return False
    return len(name) == 0


def _scan_chunk(pattern: bytes) -> tuple[bool, bytes, bytes]:
    star = False
    while pattern and pattern[0] == _STAR:
        pattern = pattern[1:]
        star = True
    inrange = False
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == _BSLASH:
            if i + 1 < n:
                i += 1
        elif c == _LBRACK:
            inrange = True
        elif c == _RBRACK:
            inrange = False
        elif c == _STAR and not inrange:
            break
        i += 1
    return star, pattern[:i], pattern[i:]


def _match_chunk(chunk: bytes, s: bytes) -> tuple[bytes, bool, bool]:
    """Returns (rest, ok, bad_pattern)."""
    while chunk:
        if not s:
            return b"", False, False
        c = chunk[0]
        if c == _LBRACK:
            r, n = _decode_rune(s, 0)
            s = s[n:]
            chunk = chunk[1:]
            not_negated = True
            if chunk and chunk[0] == _CARET:
                not_negated = False
                chunk = chunk[1:]
            matched = False
            nrange = 0
            while True:
                if chunk and chunk[0] == _RBRACK and nrange > 0:
                    chunk = chunk[1:]
                    break
                lo, chunk, bad = _get_esc(chunk)
                if bad:
                    return b"", False, True
                hi = lo
                if chunk[0] == _DASH:
                    hi, chunk, bad = _get_esc(chunk[1:])
                    if bad:
                        return b"", False, True
                if lo <= r <= hi:
                    matched = True
                nrange += 1
            if matched != not_negated:
                return b"", False, False
        elif c == _QUEST:
            _, n = _decode_rune(s, 0)
            s = s[n:]
            chunk = chunk[1:]
        else:
            if c == _BSLASH:
                chunk = chunk[1:]
                if not chunk:
                    return b"", False, True
            if chunk[0] != s[0]:
                return b"", False, False
            s = s[1:]
            chunk = chunk[1:]
    return s, True, False


def _get_esc(chunk: bytes) -> tuple[int, bytes, bool]:
    """Returns (rune, rest, bad_pattern)."""
    if not chunk or chunk[0] == _DASH or chunk[0] == _RBRACK:
        return 0, chunk, True
    if chunk[0] == _BSLASH:
        chunk = chunk[1:]
        if not chunk:
            return 0, chunk, True
    r, n = _decode_rune(chunk, 0)
    bad = r == _RUNE_ERROR and n == 1
    nchunk = chunk[n:]
    if not nchunk:
        bad = True
    return r, nchunk, bad
