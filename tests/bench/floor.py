"""The floor of a fluxgraph run on a repository: start Python, import the design card's
libraries, and parse the same YAML files fluxgraph reads with libyaml.

Not a test. ``bench_graph.py`` runs it beside ``graph`` and ``check`` and prints each row's
ratio to it: what a run costs beyond reading its input with the card's libraries.

Two floors, because "parse" can mean two things:

- ``parse`` (the default, the floor of issue 15): libyaml's parser and ruamel's C composer turn
  every document into a node tree, with positions. No Python data is built: this is the least
  any YAML reader of these files pays.
- ``load`` (``--load``): the same, then ruamel's safe constructor builds the Python data
  (dicts, lists, scalars), as ``YAML(typ="safe")`` or PyYAML's ``CSafeLoader`` do; a reader
  that needs the data, as fluxgraph does, pays at least this with the stock constructor.

Run:  python tests/bench/floor.py REPO [FILES] [--load]

FILES lists the repository-relative paths to parse, one per line (``bench_graph.py`` writes the
files a fluxgraph run parsed: ``FileCache.parsed_files()``); without it every ``.yaml``/``.yml``
file of the repository is parsed.
"""

from __future__ import annotations

import os
import sys

import click  # noqa: F401  (imported for its cost, as fluxgraph's CLI does)
import lark  # noqa: F401
import networkx  # noqa: F401
import pydot  # noqa: F401
from ruamel.yaml import YAML
from ruamel.yaml.cyaml import CBaseLoader  # libyaml's parser and ruamel.yaml.clib's C composer


def _all_yaml(root: str) -> list[str]:
    out = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        out += [os.path.join(d, n) for n in names if n.endswith((".yaml", ".yml"))]
    return out


def _parse(data: bytes) -> int:
    loader = CBaseLoader(data)
    documents = 0
    try:
        while loader.check_node():
            loader.get_node()
            documents += 1
    finally:
        loader.dispose()
    return documents


def main(root: str, listing: str | None, load: bool) -> int:
    yaml = YAML(typ="safe")  # ruamel's C parser (libyaml) with its Python safe constructor
    if listing:
        with open(listing) as fh:
            paths = [os.path.join(root, line.strip()) for line in fh if line.strip()]
    else:
        paths = _all_yaml(root)
    documents = 0
    for path in paths:
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            documents += sum(1 for _ in yaml.load_all(data)) if load else _parse(data)
        except Exception:  # noqa: BLE001 - a file libyaml refuses still cost its parse
            pass
    print(f"{len(paths)} files, {documents} documents")
    return 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--load"]
    sys.exit(main(args[0], args[1] if len(args) > 1 else None, "--load" in sys.argv[1:]))
