"""What the post-processing of a case needs from its file: the ``[[hotspots]]`` as
:class:`~flexmbs.post.hotspots.HotSpot` objects (node sets resolved, points snapped to
the nearest node ``argmin_j |X_j - x|``) and the solids of its rigid bodies
(:class:`~flexmbs.post.scene.Solid`) for the XDMF of the whole mechanism."""
from __future__ import annotations

import numpy as np

from flexmbs.errors import CaseError, MeshError
from flexmbs.post.hotspots import HotSpot, SNCurve, nearest_node
from flexmbs.post.scene import Solid


def _mesh_node_sets(b: dict, n_points: int, where: str) -> dict:
    """The named node sets of body spec ``b``'s mesh (none for a body given by its file);
    the mesh must number its nodes as the body does."""
    if b.get("mesh") is None:
        return {}
    from flexmbs.io.mesh import read_mesh
    try:
        mesh = read_mesh(b["mesh"], scale=1e-3 if b["unit"] == "mm" else 1.0)
    except MeshError as exc:
        raise CaseError(f"{where}: {exc}") from None
    if mesh.n_nodes != n_points:
        raise CaseError(f"{where}: the mesh {b['mesh']} has {mesh.n_nodes} nodes, its body "
                        f"{n_points}: cannot map its node sets")
    return dict(mesh.node_sets)


#: a hot spot's point may lie this fraction of its mesh's diagonal from the nearest node
SNAP_FRACTION = 0.1


def _check_snap(points, node: int, x, where: str, body: str) -> None:
    """:class:`CaseError` if the point ``x`` [m] lies farther from its nearest node than
    :data:`SNAP_FRACTION` of the mesh's bounding-box diagonal: a point off the body (a
    typo, millimetres) would silently take a node of the surface."""
    points = np.asarray(points, dtype=float)
    lo, hi = points.min(0), points.max(0)
    dist = float(np.linalg.norm(points[node] - np.asarray(x, dtype=float)))
    if dist > SNAP_FRACTION * float(np.linalg.norm(hi - lo)):
        box = " x ".join(f"[{a:.4g}, {b:.4g}]" for a, b in zip(lo, hi))
        raise CaseError(f"{where}: expected a point on body '{body}' (its mesh spans {box} m), "
                        f"got {[float(v) for v in x]}: the nearest node is {dist:.4g} m away")


def hotspots(spec, built) -> list[HotSpot]:
    """The hot spots of a built case (:class:`CaseError` naming the key for an unknown
    node set)."""
    out = []
    by_name = {b["name"]: b for b in spec.bodies}
    for h in spec.hotspots:
        body = built.flexible[h["body"]].body
        where = spec.where(h["path"])
        try:
            sn = SNCurve.through(**h["sn_curve"]) if h.get("sn_curve") else None
        except ValueError as exc:
            raise CaseError(f"{where}.sn_curve: {exc}") from None
        if h.get("point") is not None:
            nodes = [nearest_node(body.points, h["point"])]
            _check_snap(body.points, nodes[0], h["point"], f"{where}.point", h["body"])
        else:
            sets = {mk.name: mk.nodes for mk in body.markers}
            if h["node_set"] not in sets:
                sets.update(_mesh_node_sets(by_name[h["body"]], len(body.points), where))
            if h["node_set"] not in sets:
                raise CaseError(f"{where}.node_set: body '{h['body']}' has no node set "
                                f"\"{h['node_set']}\"; node sets: "
                                f"{', '.join(sorted(sets)) or 'none'}")
            nodes = sets[h["node_set"]]
        try:
            out.append(HotSpot(h["name"], h["body"], np.asarray(nodes), sn))
        except ValueError as exc:                    # an empty node set
            raise CaseError(f"{where}.node_set: {exc}") from None
    return out


def solids(spec, built) -> dict[str, Solid]:
    """The :class:`Solid` of each rigid body: its ``shape``, or a glyph of its frame axes
    of length twice its largest radius of gyration ``2 sqrt(max eig(I_S) / m)``."""
    out = {}
    for b in spec.bodies:
        if b["type"] != "rigid":
            continue
        com = tuple(b.get("com") or (0.0, 0.0, 0.0))
        if b.get("shape") is not None:
            out[b["name"]] = Solid(b["shape"], com, tuple(b.get("size") or (0.0,) * 3),
                                   b.get("radius") or 0.0, b.get("length") or 0.0,
                                   b.get("axis") or "z")
        else:
            obj = built.bodies[b["name"]]
            k = np.sqrt(np.linalg.eigvalsh(np.asarray(obj.I_S)).max() / obj.m)
            out[b["name"]] = Solid("frame", length=2.0 * float(k))
    return out
