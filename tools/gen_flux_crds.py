"""Generate fluxgraph/data/flux-crds.json: the Flux CRDs of every Flux minor fluxgraph models.

For each Flux minor (the newest patch tag of it in fluxcd/flux2), the controller releases that
tag installs (``manifests/bases/<controller>/kustomization.yaml``: the
``releases/download/<tag>/<controller>.crds.yaml`` resource), and each controller's CRDs at that
tag (``config/crd/bases/*.yaml`` of its repository, the files the release's ``crds.yaml`` is
built from). What is kept of each CRD version: ``served``, ``deprecated`` and
``deprecationWarning``, ``storage``, and its ``openAPIV3Schema`` reduced by ``fluxgraph.fluxapi.reduce_schema`` to what the field check reads: properties, items, additionalProperties, required,
``x-kubernetes-preserve-unknown-fields``. Identical schemas are stored once.

Run with local mirrors of the repositories (``git clone --mirror`` or the tool library's
``fetch``), one directory per repository named ``fluxcd+<name>/repo``:

    python tools/gen_flux_crds.py --mirrors /work/.mirror > fluxgraph/data/flux-crds.json

The output is deterministic (sorted keys); tests/test_fluxapi.py regenerates it where the
mirrors are present and compares.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fluxgraph.fluxapi import reduce_schema  # noqa: E402  (one implementation, shared with the check)
from fluxgraph.yamlio import load_text  # noqa: E402  (fluxgraph's own YAML reader: no other dependency)

CONTROLLERS = (
    "source-controller",
    "kustomize-controller",
    "helm-controller",
    "notification-controller",
    "image-reflector-controller",
    "image-automation-controller",
    "source-watcher",
)
FIRST_MINOR = 0  # Flux 2.0


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def minors(flux2: Path) -> dict[str, str]:
    """Flux minor ``2.N`` -> its newest patch tag."""
    out: dict[str, tuple[int, str]] = {}
    for tag in git(flux2, "tag").split():
        m = re.fullmatch(r"v2\.(\d+)\.(\d+)", tag)
        if m and int(m.group(1)) >= FIRST_MINOR:
            key = f"2.{m.group(1)}"
            if key not in out or int(m.group(2)) > out[key][0]:
                out[key] = (int(m.group(2)), tag)
    return {k: v[1] for k, v in sorted(out.items(), key=lambda kv: int(kv[0].split(".")[1]))}


def available(repo: Path, tag: str) -> str:
    """``tag``, or where the mirror lacks it (a patch release tagged on a release branch the
    snapshot does not hold) the newest tag of the same minor before it: patch releases do not
    change the API."""
    tags = set(git(repo, "tag").split())
    if tag in tags:
        return tag
    m = re.fullmatch(r"(v\d+\.\d+)\.(\d+)", tag)
    if m:
        for patch in range(int(m.group(2)) - 1, -1, -1):
            if f"{m.group(1)}.{patch}" in tags:
                return f"{m.group(1)}.{patch}"
    raise SystemExit(f"{repo}: no tag {tag} nor an earlier patch of it")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, required=True)
    args = ap.parse_args()
    flux2 = args.mirrors / "fluxcd+flux2" / "repo"
    schemas: dict[str, Any] = {}
    releases: dict[str, Any] = {}
    for minor, tag in minors(flux2).items():
        controllers: dict[str, str] = {}
        crds: dict[str, Any] = {}
        for c in CONTROLLERS:
            try:
                k = git(flux2, "show", f"{tag}:manifests/bases/{c}/kustomization.yaml")
            except subprocess.CalledProcessError:
                continue
            m = re.search(rf"{c}/releases/download/(v[^/]+)/", k)
            if not m:
                continue
            repo = args.mirrors / f"fluxcd+{c}" / "repo"
            ctag = available(repo, m.group(1))
            controllers[c] = m.group(1) if ctag == m.group(1) else f"{m.group(1)} (CRDs read at {ctag})"
            for path in git(repo, "ls-tree", "--name-only", f"{ctag}:config/crd/bases").split():
                [doc] = load_text(git(repo, "show", f"{ctag}:config/crd/bases/{path}"))
                spec = doc["spec"]
                versions = {}
                for v in spec["versions"]:
                    tree = reduce_schema((v.get("schema") or {}).get("openAPIV3Schema"))
                    h = hashlib.sha256(json.dumps(tree, sort_keys=True).encode()).hexdigest()[:16]
                    schemas[h] = tree
                    entry: dict[str, Any] = {"served": bool(v.get("served")), "storage": bool(v.get("storage")), "schema": h}
                    if v.get("deprecated"):
                        entry["deprecated"] = True
                        if v.get("deprecationWarning"):
                            entry["deprecationWarning"] = v["deprecationWarning"]
                    versions[v["name"]] = entry
                crds[f"{spec['group']}/{spec['names']['kind']}"] = {
                    "controller": c,
                    "plural": spec["names"]["plural"],
                    "versions": versions,
                }
        releases[minor] = {"tag": tag, "controllers": controllers, "crds": dict(sorted(crds.items()))}
    doc = {
        "generatedBy": "tools/gen_flux_crds.py",
        "source": "fluxcd/flux2 manifests/bases at each tag; each controller's config/crd/bases at the release it pins",
        "releases": releases,
        "schemas": dict(sorted(schemas.items())),
    }
    json.dump(doc, sys.stdout, sort_keys=False, separators=(",", ":"))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
