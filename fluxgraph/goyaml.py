"""A YAML 1.2 parser that scans as Go's yaml.v3 does, for the files libyaml refuses.

kustomize-controller reads manifests with kustomize's kyaml, which parses with yaml.v3
(``sigs.k8s.io/yaml/goyaml.v3``, a copy of ``gopkg.in/yaml.v3`` v3.0.1). fluxgraph parses with
libyaml first (``ruamel.yaml.clib``, fast), but the libyaml it bundles is older than yaml.v3 and
refuses some YAML that yaml.v3 reads, above all a ``:`` inside a plain scalar in a flow
collection (``roles: [os:etcd:backup]``: "found unexpected ':'"). ``fluxgraph.yamlio`` reads
such files again with this parser before calling them broken.

It is ruamel.yaml's pure-Python scanner and parser (YAML 1.2, marks kept), with the few scanner
rules where ruamel and yaml.v3 part ways replaced by yaml.v3's, each citing the function of
yaml.v3's ``scannerc.go`` / ``parserc.go`` it follows:

- plain scalars: in a flow collection they end at ``,?[]{}`` and at ``:`` before a blank;
  ``a:b`` is one scalar, ``a?b`` is not (ruamel keeps ``?`` in 1.2, yaml.v3 ends the scalar);
  a ``:`` followed by anything else is never an error (ruamel and libyaml refuse ``a:[``).
- in a flow collection ``:`` is always a value indicator and ``?`` a key indicator, so neither
  starts a plain scalar there (``[:a]`` is refused, as by yaml.v3).
- tabs separate tokens wherever yaml.v3 allows them (inside flow collections, and in block
  context after a token that cannot start a simple key: ``a:<TAB>b``, ``- a<TAB># c``); ruamel
  allows tabs only inside flow collections.
- a BOM at the start of any line is skipped.
- directives: ``%YAML`` must be 1.1 ("found incompatible YAML document"), a directive other than
  ``%YAML``/``%TAG`` is refused ("found unknown directive name").
- the scanner never switches to YAML 1.1 rules on ``%YAML 1.1``: yaml.v3 has one set of rules.

Whatever else the two parsers do alike (block structure, quoting, block scalars, simple keys)
is ruamel's code unchanged. The conformance cases in ``tests/test_yaml_conformance.py`` state
yaml.v3's verdict for each rule above.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.docinfo import DocInfo
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.main import YAML
from ruamel.yaml.parser import ParserError
from ruamel.yaml.scanner import Scanner, ScannerError
from ruamel.yaml.tokens import ScalarToken

_BREAKS = "\r\n\x85\u2028\u2029"
_BLANKZ = "\0 \t" + _BREAKS  # yaml.v3 is_blankz: blank, break or end of input
_PLAIN_NEVER_STARTS = _BLANKZ + "-?:,[]{}#&*!|>'\"%@`"  # yaml.v3 yaml_parser_fetch_next_token


class GoScanner(Scanner):
    """ruamel's scanner with yaml.v3's rules where they differ (see the module doc)."""

    @property
    def scanner_processing_version(self) -> Any:
        return (1, 2)  # never the YAML 1.1 variants of ruamel's rules

    def scan_to_next_token(self) -> Any:
        # yaml.v3 yaml_parser_scan_to_next_token: a BOM at the start of a line is skipped; tabs
        # are whitespace in flow context, or where a simple key is not allowed
        peek, forward = self.reader.peek, self.reader.forward
        while True:
            if self.reader.column == 0 and peek() == "\ufeff":
                forward()
            tabs = bool(self.flow_level) or not self.allow_simple_key
            while peek() == " " or (tabs and peek() == "\t"):
                forward()
            if peek() == "#":
                while peek() not in _BREAKS and peek() != "\0":
                    forward()
            if self.scan_line_break():
                if not self.flow_level:
                    self.allow_simple_key = True
            else:
                return None

    def check_value(self) -> Any:
        # yaml.v3 yaml_parser_fetch_next_token: ':' is a value indicator in flow context, or
        # before a blank
        return bool(self.flow_level) or self.reader.peek(1) in _BLANKZ

    def check_plain(self) -> Any:
        # yaml.v3 yaml_parser_fetch_next_token, the plain scalar case
        peek = self.reader.peek
        ch = peek()
        if ch not in _PLAIN_NEVER_STARTS:
            return True
        if ch == "-" and peek(1) not in " \t":
            return True
        return not self.flow_level and ch in "?:" and peek(1) not in _BLANKZ

    def scan_directive(self) -> Any:
        # yaml.v3 yaml_parser_scan_directive ("found unknown directive name") and
        # parserc.go yaml_parser_process_directives ("found incompatible YAML document")
        start_mark = self.reader.get_mark()
        token = super().scan_directive()
        if token.name not in ("YAML", "TAG"):
            raise ScannerError("while scanning a directive", start_mark, "found unknown directive name", start_mark)
        if token.name == "YAML" and tuple(token.value) != (1, 1):
            raise ParserError(None, None, "found incompatible YAML document (yaml.v3 reads %YAML 1.1 only)", start_mark)
        return token

    def scan_plain(self) -> Any:
        # yaml.v3 yaml_parser_scan_plain_scalar
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        start_mark = end_mark = self.reader.get_mark()
        indent = self.indent + 1
        spaces: list[str] | None = []
        while True:
            if peek() == "#":
                break
            length = 0
            while True:
                ch = peek(length)
                if ch in _BLANKZ or (ch == ":" and peek(length + 1) in _BLANKZ) or (self.flow_level and ch in ",?[]{}"):
                    break
                length += 1
            if length == 0:
                break
            self.allow_simple_key = False
            chunks.extend(spaces or ())
            chunks.append(self.reader.prefix(length))
            forward(length)
            end_mark = self.reader.get_mark()
            spaces = self.scan_plain_spaces(indent, start_mark)
            if not spaces or peek() == "#" or (not self.flow_level and self.reader.column < indent):
                break
        return ScalarToken("".join(chunks), True, start_mark, end_mark)

    def scan_plain_spaces(self, indent: Any, start_mark: Any) -> Any:
        # yaml.v3 yaml_parser_scan_plain_scalar, the blanks between words: tabs are blanks too,
        # but not in the indentation of a continuation line
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        length = 0
        while peek(length) in " \t":
            length += 1
        whitespaces = self.reader.prefix(length)
        forward(length)
        if peek() in _BREAKS:
            line_break = self.scan_line_break()
            self.allow_simple_key = True
            if self._document_marker():
                return None
            breaks = []
            while peek() in " \t" + _BREAKS:
                if peek() == " ":
                    forward()
                elif peek() == "\t":
                    if self.reader.column < indent:
                        raise ScannerError(
                            "while scanning a plain scalar", start_mark, "found a tab character that violates indentation", self.reader.get_mark()
                        )
                    forward()
                else:
                    breaks.append(self.scan_line_break())
                    if self._document_marker():
                        return None
            if line_break != "\n":
                chunks.append(line_break)
            elif not breaks:
                chunks.append(" ")
            chunks.extend(breaks)
        elif whitespaces:
            chunks.append(whitespaces)
        return chunks

    def _document_marker(self) -> bool:
        prefix = self.reader.prefix(3)
        return (prefix == "---" or prefix == "...") and self.reader.peek(3) in _BLANKZ


def parser(text: str) -> Any:
    """An event source (``get_event()``, ``dispose()``) reading ``text`` with ``GoScanner``."""
    y = YAML(typ="safe", pure=True)
    y.Scanner = GoScanner
    y.doc_infos.append(DocInfo())  # what YAML.parse() does first: the scanner records %YAML in it
    _, p = y.get_constructor_parser(text)
    return p


__all__ = ["GoScanner", "MarkedYAMLError", "parser"]
