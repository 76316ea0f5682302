"""The floor of a fluxgraph run on a repository: start Python, import the design card's
libraries, and parse every YAML file of the repository with libyaml into Python data.

Not a test. ``bench_graph.py`` runs it beside ``graph`` and ``check`` and prints each row's
ratio to it: a whole fluxgraph run cannot cost less than this, so the ratio says what the
analysis itself adds.

Run:  python tests/bench/floor.py REPO
"""

from __future__ import annotations

import os
import sys

import click  # noqa: F401  (imported for its cost, as fluxgraph's CLI does)
import lark  # noqa: F401
import networkx  # noqa: F401
import pydot  # noqa: F401
from ruamel.yaml import YAML


def main(root: str) -> int:
    yaml = YAML(typ="safe")  # ruamel's C loader (libyaml) when ruamel.yaml.clib is installed
    files = documents = 0
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        for name in names:
            if not name.endswith((".yaml", ".yml")):
                continue
            with open(os.path.join(d, name), "rb") as fh:
                data = fh.read()
            files += 1
            try:
                documents += sum(1 for _ in yaml.load_all(data))
            except Exception:  # noqa: BLE001 - a file libyaml refuses still cost its parse
                pass
    print(f"{files} files, {documents} documents")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
