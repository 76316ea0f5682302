"""The floor of a fluxgraph run on a repository: start Python, import the design card's
libraries, and parse the same YAML files fluxgraph reads with libyaml into Python data.

Not a test. ``bench_graph.py`` runs it beside ``graph`` and ``check`` and prints each row's
ratio to it: what a run costs beyond reading its input with the card's libraries.

Run:  python tests/bench/floor.py REPO [FILES]

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


def _all_yaml(root: str) -> list[str]:
    out = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        out += [os.path.join(d, n) for n in names if n.endswith((".yaml", ".yml"))]
    return out


def main(root: str, listing: str | None) -> int:
    yaml = YAML(typ="safe")  # ruamel's C loader (libyaml) when ruamel.yaml.clib is installed
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
            documents += sum(1 for _ in yaml.load_all(data))
        except Exception:  # noqa: BLE001 - a file libyaml refuses still cost its parse
            pass
    print(f"{len(paths)} files, {documents} documents")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
