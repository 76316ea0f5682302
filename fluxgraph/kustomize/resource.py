"""A resource as it moves through a build: its data plus where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fluxgraph.model import Location, ObjRef, api_group
from fluxgraph.yamlio import Document


@dataclass(frozen=True)
class Origin:
    """Provenance: the document a resource was read from (or the kustomization that generated
    it), the kustomization files of the directories the build entered to reach it, outermost
    first (``via``: the top-level one first, without the innermost), and ``home``, the
    kustomization whose own build the resource joined: the one that lists its file or generates
    it, or, for a component's resource, the kustomization that includes the component."""

    file: str
    line: int
    doc_index: int = 0
    via: tuple[str, ...] = ()
    generated_by: str | None = None  # "configMapGenerator" / "secretGenerator"
    home: str | None = None

    @property
    def location(self) -> Location:
        return Location(self.file, max(1, self.line), 1)


LOCAL_CONFIG = "config.kubernetes.io/local-config"  # kyaml konfig.IgnoredByKustomizeAnnotation


def copy_data(v: Any) -> Any:
    """A deep copy of parsed YAML/JSON data: new dicts and lists, scalars shared.

    ``copy.deepcopy`` gives the same result on such data (the YAML constructor builds a fresh
    object for every alias use, so nothing is shared that a memo would have to keep shared) at
    about a fifth of the speed; copying documents into resources was a tenth of a build.
    """
    t = type(v)
    if t is dict:
        return {k: copy_data(x) for k, x in v.items()}
    if t is list:
        return [copy_data(x) for x in v]
    if isinstance(v, dict):
        return {k: copy_data(x) for k, x in v.items()}
    if isinstance(v, list):
        return [copy_data(x) for x in v]
    return v


class Resource:
    __slots__ = ("data", "origin", "doc", "needs_hash", "prev_names", "behavior")

    def __init__(
        self,
        data: dict[str, Any],
        origin: Origin,
        doc: Document | None = None,
        needs_hash: bool = False,
    ):
        self.data = data
        self.origin = origin
        self.doc = doc
        self.needs_hash = needs_hash
        # names this resource had before prefix/suffix/hash renames: (kind, namespace, name)
        self.prev_names: list[tuple[str, str, str]] = []
        self.behavior = "create"

    # identity --------------------------------------------------------------------------
    @property
    def api_version(self) -> str:
        v = self.data.get("apiVersion")
        return v if isinstance(v, str) else ""

    @property
    def kind(self) -> str:
        v = self.data.get("kind")
        return v if isinstance(v, str) else ""

    @property
    def metadata(self) -> dict[str, Any]:
        md = self.data.get("metadata")
        return md if isinstance(md, dict) else {}

    @property
    def name(self) -> str:
        v = self.metadata.get("name")
        return v if isinstance(v, str) else ("" if v is None else str(v))

    @property
    def namespace(self) -> str:
        v = self.metadata.get("namespace")
        return v if isinstance(v, str) else ("" if v is None else str(v))

    @property
    def group(self) -> str:
        return api_group(self.api_version)

    @property
    def ref(self) -> ObjRef:
        return ObjRef(self.kind, self.namespace, self.name, self.group)

    def id_key(self) -> tuple[str, str, str, str]:
        """kustomize's ResId: group, kind, namespace, name (version is not part of it)."""
        return (self.group, self.kind, self.namespace, self.name)

    def labels(self) -> dict[str, Any]:
        v = self.metadata.get("labels")
        return v if isinstance(v, dict) else {}

    def annotations(self) -> dict[str, Any]:
        v = self.metadata.get("annotations")
        return v if isinstance(v, dict) else {}

    @property
    def local_config(self) -> bool:
        """Annotated ``config.kubernetes.io/local-config`` with any value but ``false``: input
        for other steps of the build (a replacement's source), never part of its output.

        kustomize ``api/resource/factory.go`` ``DropLocalNodes``: kept when the annotation is
        absent or its text is ``"false"``; an empty or null value drops it too. The data holds
        yaml.v3's values, so an unquoted ``false`` is the boolean here (kyaml reads its text);
        ``False`` and ``FALSE``, which kyaml would drop, read the same and are kept."""
        annotations = self.annotations()
        if LOCAL_CONFIG not in annotations:
            return False
        v = annotations[LOCAL_CONFIG]
        return not (v == "false" or v is False)

    def ensure_metadata(self) -> dict[str, Any]:
        md = self.data.get("metadata")
        if not isinstance(md, dict):
            md = {}
            self.data["metadata"] = md
        return md

    def set_name(self, name: str) -> None:
        old = (self.kind, self.namespace, self.name)
        if old[2] != name:
            self.prev_names.append(old)
        self.ensure_metadata()["name"] = name

    def copy(self) -> Resource:
        r = Resource(copy_data(self.data), self.origin, self.doc, self.needs_hash)
        r.prev_names = list(self.prev_names)
        r.behavior = self.behavior
        return r

    def position(self, path: tuple[Any, ...], *, key: bool = False) -> Location:
        """1-based location of a field in the source document (or the document start); with
        ``key``, of its name rather than its value."""
        if self.doc is not None:
            line, col = self.doc.position(path, key=key)
            return Location(self.origin.file, line, col)
        return self.origin.location

    def __repr__(self) -> str:
        return f"<Resource {self.ref} from {self.origin.file}:{self.origin.line}>"
