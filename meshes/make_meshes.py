"""Regenerate every shipped mesh with the gmsh Python API (deterministic).

Run from anywhere::

    python meshes/make_meshes.py            # all shipped meshes
    python meshes/make_meshes.py conrod     # only those whose name contains "conrod"
    python meshes/make_meshes.py --generated            # the large on-demand meshes
    python meshes/make_meshes.py --generated tet4       # ... whose name contains "tet4"

Shipped meshes are written next to this script as gmsh MSH 4.1 ASCII. The large
meshes of :data:`GENERATED` (tens of MB, not committed) go to ``meshes/generated/``
(gitignored); tests get them with :func:`ensure_mesh`, which generates a missing file
once. Physical groups become flexmbs node sets (all groups), facet sets (2D groups)
and cell sets (3D groups).
"""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import gmsh

HERE = Path(__file__).resolve().parent
#: directory of the on-demand meshes (gitignored)
GENERATED_DIR = HERE / "generated"

# Kane, Ryan & Banerjee (1987) spin-up beam: L = 8 m, A = 7.2968e-5 m^2, I = 8.2189e-9 m^4.
# Rectangle b x h with A = b h and I = b h^3 / 12 (bending in the y direction, the plane
# of rotation): h = sqrt(12 I / A), b = A / h.  Both match exactly.
KANE_L = 8.0
KANE_H = math.sqrt(12.0 * 8.2189e-9 / 7.2968e-5)  # 0.0367645 m (in-plane, y)
KANE_B = 7.2968e-5 / KANE_H  # 0.00198474 m (out of plane, z)


def _start(name: str) -> None:
    gmsh.initialize(["-noenv"], readConfigFiles=False)
    gmsh.option.setNumber("General.Terminal", 0)
    gmsh.option.setNumber("General.NumThreads", 1)
    gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
    gmsh.option.setNumber("Mesh.Binary", 0)
    gmsh.option.setNumber("Mesh.RandomSeed", 1.0)
    gmsh.model.add(name)


def _tet10_by_curvature(filename: str, size: float, per_circle: int) -> None:
    """Mesh the model with tet10 elements of size ``size`` (down to ``size / 4``,
    ``per_circle`` elements around curved edges) and write it to ``filename``."""
    gmsh.option.setNumber("Mesh.MeshSizeMax", size)
    gmsh.option.setNumber("Mesh.MeshSizeMin", 0.25 * size)
    gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", per_circle)
    gmsh.option.setNumber("Mesh.ElementOrder", 2)
    gmsh.option.setNumber("Mesh.HighOrderOptimize", 1)
    gmsh.model.mesh.generate(3)
    _finish(filename)


def _finish(filename: str | Path) -> None:
    """Write the current model to ``filename`` (relative names: next to this script).

    Written to a temporary file first and renamed, so a reader never sees a partial file.
    """
    path = HERE / filename
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.msh")
    try:
        gmsh.write(str(tmp))
    finally:
        gmsh.finalize()
    os.replace(tmp, path)


def _faces_at(dim_tags, axis: int, value: float, tol: float = 1e-6) -> list[int]:
    """Surfaces whose bounding box is flat at ``x[axis] = value``."""
    out = []
    for d, s in dim_tags:
        bb = gmsh.model.getBoundingBox(d, s)
        if abs(bb[axis] - value) < tol and abs(bb[axis + 3] - value) < tol:
            out.append(s)
    return out


def box_beam(filename: str | Path, size: tuple[float, float, float], n: tuple[int, int, int],
             cell: str, faces: tuple[str, str] = ("clamp", "tip")) -> None:
    """Structured (transfinite) beam ``[0, L] x [0, b] x [0, h]``.

    ``cell`` is tet4, tet10 (each hexahedral cell split into tetrahedra by gmsh),
    hex8, hex20 (serendipity: ``Mesh.SecondOrderIncomplete``, edge nodes only) or hex27; ``n`` the number of cells along x, y, z. Physical groups: the two
    end faces (x = 0 and x = L) and "volume".
    """
    L, b, h = size
    _start(Path(filename).name)
    vol = gmsh.model.occ.addBox(0.0, 0.0, 0.0, L, b, h)
    gmsh.model.occ.synchronize()
    for _, c in gmsh.model.getEntities(1):
        bb = gmsh.model.getBoundingBox(1, c)
        axis = max(range(3), key=lambda k: bb[k + 3] - bb[k])
        gmsh.model.mesh.setTransfiniteCurve(c, n[axis] + 1)
    hexa = cell.startswith("hex")
    for _, s in gmsh.model.getEntities(2):
        gmsh.model.mesh.setTransfiniteSurface(s)
        if hexa:
            gmsh.model.mesh.setRecombine(2, s)
    gmsh.model.mesh.setTransfiniteVolume(vol)
    if hexa:
        gmsh.model.mesh.setRecombine(3, vol)
    surfaces = gmsh.model.getEntities(2)
    gmsh.model.addPhysicalGroup(2, _faces_at(surfaces, 0, 0.0), name=faces[0])
    gmsh.model.addPhysicalGroup(2, _faces_at(surfaces, 0, L), name=faces[1])
    gmsh.model.addPhysicalGroup(3, [vol], name="volume")
    order = 2 if cell in ("tet10", "hex20", "hex27") else 1
    gmsh.option.setNumber("Mesh.ElementOrder", order)
    gmsh.option.setNumber("Mesh.SecondOrderIncomplete", int(cell == "hex20"))
    gmsh.model.mesh.generate(3)
    _finish(filename)


def conrod(filename: str, size: float) -> None:
    """Connecting rod, tet10: pin centres (0, 0) and (0.4, 0), hole radius 0.01 m,
    boss radius 0.025 m, web width 0.02 m, thickness 0.01 m (z from 0 to 0.01).

    Physical groups: "hole_A" (cylindrical surface of the hole at x = 0), "hole_B"
    (at x = 0.4) and "volume".
    """
    d, r_hole, r_boss, web, t = 0.4, 0.01, 0.025, 0.02, 0.01
    _start(filename)
    occ = gmsh.model.occ
    boss_a = occ.addDisk(0.0, 0.0, 0.0, r_boss, r_boss)
    boss_b = occ.addDisk(d, 0.0, 0.0, r_boss, r_boss)
    bar = occ.addRectangle(0.0, -web / 2, 0.0, d, web)
    outline, _ = occ.fuse([(2, boss_a)], [(2, boss_b), (2, bar)])
    hole_a = occ.addDisk(0.0, 0.0, 0.0, r_hole, r_hole)
    hole_b = occ.addDisk(d, 0.0, 0.0, r_hole, r_hole)
    plate, _ = occ.cut(outline, [(2, hole_a), (2, hole_b)])
    ext = occ.extrude(plate, 0.0, 0.0, t)
    occ.synchronize()
    vols = [tag for dim, tag in ext if dim == 3]
    holes = {"hole_A": [], "hole_B": []}
    for _, s in gmsh.model.getEntities(2):
        cx, cy, _ = occ.getCenterOfMass(2, s)
        bb = gmsh.model.getBoundingBox(2, s)
        radius = 0.5 * max(bb[3] - bb[0], bb[4] - bb[1])
        if abs(radius - r_hole) < 1e-6 and bb[5] - bb[2] > 0.5 * t:
            holes["hole_A" if cx < d / 2 else "hole_B"].append(s)
    for name, tags in holes.items():
        if not tags:
            raise RuntimeError(f"conrod: no surface found for {name}")
        gmsh.model.addPhysicalGroup(2, tags, name=name)
    gmsh.model.addPhysicalGroup(3, vols, name="volume")
    _tet10_by_curvature(filename, size, 12)


#: pin-loaded lug [m]: hole centre (0, 0), hole radius, outer radius of the rounded
#: head, plate width, length from the hole centre to the loaded end, thickness
LUG = {"r_hole": 0.008, "r_head": 0.02, "width": 0.04, "length": 0.08, "t": 0.005}


def lug(filename: str, size: float, hole_size: float) -> None:
    """Pin-loaded lug, tet10: a plate of width 0.04 m from the hole centre (0, 0) to the
    loaded end x = 0.08 m, its head rounded with radius 0.02 m about the hole of radius
    0.008 m, thickness 0.005 m (z from 0 to 0.005).  Element size ``size`` and
    ``hole_size`` on the hole.

    Physical groups: "hole" (the cylindrical hole surface, where the pin bears), "end"
    (the face x = 0.08 m, clamped or loaded) and "volume".
    """
    g = LUG
    _start(filename)
    occ = gmsh.model.occ
    head = occ.addDisk(0.0, 0.0, 0.0, g["r_head"], g["r_head"])
    shank = occ.addRectangle(0.0, -g["width"] / 2, 0.0, g["length"], g["width"])
    outline, _ = occ.fuse([(2, head)], [(2, shank)])
    hole = occ.addDisk(0.0, 0.0, 0.0, g["r_hole"], g["r_hole"])
    plate, _ = occ.cut(outline, [(2, hole)])
    ext = occ.extrude(plate, 0.0, 0.0, g["t"])
    occ.synchronize()
    vols = [tag for dim, tag in ext if dim == 3]
    hole_faces = []
    for _, s in gmsh.model.getEntities(2):
        bb = gmsh.model.getBoundingBox(2, s)
        radius = 0.5 * max(bb[3] - bb[0], bb[4] - bb[1])
        if abs(radius - g["r_hole"]) < 1e-6 and bb[5] - bb[2] > 0.5 * g["t"]:
            hole_faces.append(s)
    end = _faces_at(gmsh.model.getEntities(2), 0, g["length"])
    if not hole_faces or len(end) != 1:
        raise RuntimeError(f"lug: found hole surfaces {hole_faces} and end faces {end}")
    gmsh.model.addPhysicalGroup(2, hole_faces, name="hole")
    gmsh.model.addPhysicalGroup(2, end, name="end")
    gmsh.model.addPhysicalGroup(3, vols, name="volume")
    gmsh.model.mesh.setSize(gmsh.model.getBoundary([(2, s) for s in hole_faces],
                                                   recursive=True), hole_size)
    gmsh.option.setNumber("Mesh.MeshSizeMax", size)
    gmsh.option.setNumber("Mesh.MeshSizeMin", hole_size)
    gmsh.option.setNumber("Mesh.MeshSizeExtendFromBoundary", 1)
    gmsh.option.setNumber("Mesh.ElementOrder", 2)
    gmsh.option.setNumber("Mesh.HighOrderOptimize", 1)
    gmsh.model.mesh.generate(3)
    _finish(filename)


def swept_beam(filename: str | Path, size: tuple[float, float, float],
               n: tuple[int, int, int], quads_below: float = 0.0) -> None:
    """Beam ``[0, L] x [0, b] x [0, h]`` swept along x from a structured mesh of its
    cross-section at x = 0 (``n[1] x n[2]`` squares): every square with centre
    ``z < quads_below * h`` stays a quadrangle (hex8 after the sweep), the others are
    split into two triangles (wedge6).  ``quads_below = 0``: all wedges; ``0.5``: hex8
    in the lower half, wedge6 in the upper (a mixed mesh).  ``n[0]`` layers along x.
    Physical groups: "clamp" (x = 0), "tip" (x = L) and "volume"."""
    L, b, h = size
    _start(Path(filename).name)
    geo = gmsh.model.geo
    ny, nz = n[1], n[2]
    nq = int(round(quads_below * nz))
    corners = [[geo.addPoint(0.0, y, h * k / nz) for y in (0.0, b)] for k in (0, nq, nz)]
    surfaces = []
    for (lo, hi), layers, quads in (((0, 1), nq, True), ((1, 2), nz - nq, False)):
        if layers == 0:
            continue
        a, c = corners[lo], corners[hi]
        lines = [geo.addLine(a[0], a[1]), geo.addLine(a[1], c[1]),
                 geo.addLine(c[1], c[0]), geo.addLine(c[0], a[0])]
        s = geo.addPlaneSurface([geo.addCurveLoop(lines)])
        for line, m in zip(lines, (ny, layers, ny, layers)):
            geo.mesh.setTransfiniteCurve(line, m + 1)
        geo.mesh.setTransfiniteSurface(s)
        if quads:
            geo.mesh.setRecombine(2, s)
        surfaces.append(s)
    geo.synchronize()
    ext = geo.extrude([(2, s) for s in surfaces], L, 0.0, 0.0, [n[0]], recombine=True)
    geo.synchronize()
    vols = [t for d, t in ext if d == 3]
    tips = [ext[i - 1][1] for i, (d, _) in enumerate(ext) if d == 3]
    gmsh.model.addPhysicalGroup(2, surfaces, name="clamp")
    gmsh.model.addPhysicalGroup(2, tips, name="tip")
    gmsh.model.addPhysicalGroup(3, vols, name="volume")
    gmsh.model.mesh.generate(3)
    gmsh.model.mesh.removeDuplicateNodes()
    _finish(filename)


def element_meshes():
    """(filename, generator) of the cantilevers of the hex20, wedge6 and mixed
    hex8 + wedge6 elements (the beam of :data:`BEAM`)."""
    jobs = []
    for n in ((10, 1, 1), (20, 2, 2)):
        name = f"beam_hex20_{n[0]}x{n[1]}x{n[2]}.msh"
        jobs.append((name, lambda name=name, n=n: box_beam(name, BEAM, n, "hex20")))
    for n in ((40, 4, 4), (80, 8, 8)):
        name = f"beam_wedge6_{n[0]}x{n[1]}x{n[2]}.msh"
        jobs.append((name, lambda name=name, n=n: swept_beam(name, BEAM, n)))
    for n in ((20, 2, 2), (80, 8, 8)):
        name = f"beam_hex8_wedge6_{n[0]}x{n[1]}x{n[2]}.msh"
        jobs.append((name, lambda name=name, n=n: swept_beam(name, BEAM, n,
                                                            quads_below=0.5)))
    return jobs


#: excavator members [m]: holes along each member's axis (x), in the member's own frame
#: (the first hole at the origin), plate height (y) and thickness (z), hole and boss radii
EXCAVATOR = {
    "boom": {"holes": {"root": 0.0, "cyl_boom": 0.9, "cyl_stick": 1.5, "tip": 2.4},
             "height": 0.2, "t": 0.08},
    "stick": {"holes": {"cyl_stick": -0.4, "root": 0.0, "cyl_bucket": 0.3, "tip": 1.6},
              "height": 0.16, "t": 0.08},
    "r_hole": 0.03, "r_boss": 0.07,
}


def pin_link(filename: str, name: str, size: float) -> None:
    """A straight steel link of an excavator, tet10: a plate of height ``height`` along x
    through the pin holes of :data:`EXCAVATOR` ``[name]`` (radius ``r_hole`` in bosses of
    radius ``r_boss``), thickness ``t`` (z from 0 to t).  Element size ``size``.

    Physical groups: one per hole (its cylindrical surface, named as in the table, the
    joints' and cylinders' interfaces) and "volume"."""
    g, r_hole, r_boss = EXCAVATOR[name], EXCAVATOR["r_hole"], EXCAVATOR["r_boss"]
    xs = g["holes"]
    x0, x1 = min(xs.values()), max(xs.values())
    _start(filename)
    occ = gmsh.model.occ
    bosses = [(2, occ.addDisk(x, 0.0, 0.0, r_boss, r_boss)) for x in xs.values()]
    bar = occ.addRectangle(x0, -g["height"] / 2, 0.0, x1 - x0, g["height"])
    outline, _ = occ.fuse([(2, bar)], bosses)
    holes = [(2, occ.addDisk(x, 0.0, 0.0, r_hole, r_hole)) for x in xs.values()]
    plate, _ = occ.cut(outline, holes)
    ext = occ.extrude(plate, 0.0, 0.0, g["t"])
    occ.synchronize()
    vols = [tag for dim, tag in ext if dim == 3]
    found = {k: [] for k in xs}
    for _, s in gmsh.model.getEntities(2):
        bb = gmsh.model.getBoundingBox(2, s)
        radius = 0.5 * max(bb[3] - bb[0], bb[4] - bb[1])
        if abs(radius - r_hole) < 1e-6 and bb[5] - bb[2] > 0.5 * g["t"]:
            cx = 0.5 * (bb[0] + bb[3])
            found[min(xs, key=lambda k: abs(xs[k] - cx))].append(s)
    for hole, tags in found.items():
        if not tags:
            raise RuntimeError(f"pin_link {name}: no surface found for hole {hole}")
        gmsh.model.addPhysicalGroup(2, tags, name=hole)
    gmsh.model.addPhysicalGroup(3, vols, name="volume")
    _tet10_by_curvature(filename, size, 8)


def ring(filename: str, radii: tuple[float, float], width: float, n_around: int) -> None:
    """Structured hex27 ring (a thin elastic tyre) about the z axis: inner radius
    ``radii[0]``, outer ``radii[1]`` [m], ``width`` [m] along z (centred on z = 0), one
    cell through the thickness, two across the width and ``n_around`` around (a multiple
    of 4).  Physical groups: "hub" (inner face), "tread" (outer face), "rim" (the outer
    circle in the mid-plane z = 0: a ring of ``2 n_around`` evenly spaced nodes, the
    contact curve of a rolling wheel) and "volume"."""
    r_i, r_o = radii
    geo = gmsh.model.geo
    _start(Path(filename).name)
    zs = (-0.5 * width, 0.0, 0.5 * width)
    pts = [[geo.addPoint(r, 0.0, z) for z in zs] for r in (r_i, r_o)]
    radial = [geo.addLine(pts[0][k], pts[1][k]) for k in range(3)]
    inner = [geo.addLine(pts[0][k], pts[0][k + 1]) for k in range(2)]
    outer = [geo.addLine(pts[1][k], pts[1][k + 1]) for k in range(2)]
    faces = []
    for k in range(2):
        loop = geo.addCurveLoop([radial[k], outer[k], -radial[k + 1], -inner[k]])
        faces.append(geo.addPlaneSurface([loop]))
    for c in radial + inner + outer:
        geo.mesh.setTransfiniteCurve(c, 2)
    for f in faces:
        geo.mesh.setTransfiniteSurface(f)
        geo.mesh.setRecombine(2, f)
    section = [(2, f) for f in faces]
    vols, hub, tread = [], [], []
    for _ in range(4):
        out = geo.revolve(section, 0, 0, 0, 0, 0, 1, math.pi / 2,
                          numElements=[n_around // 4], recombine=True)
        # per face: (top face, volume, 4 side faces: radial k, outer k, radial k+1, inner k)
        tops = []
        for k in range(2):
            top, vol, *sides = out[6 * k:6 * k + 6]
            tops.append(top)
            vols.append(vol[1])
            tread.append(sides[1][1])
            hub.append(sides[3][1])
        section = tops
    geo.synchronize()
    rim_curves = []                        # the outer arcs in z = 0 (bounding boxes)
    for _, c in gmsh.model.getEntities(1):
        x0, y0, z0, x1, y1, z1 = gmsh.model.getBoundingBox(1, c)
        if (max(abs(z0), abs(z1)) < 1e-9 and min(x1 - x0, y1 - y0) > 1e-6
                and max(abs(x0), abs(x1), abs(y0), abs(y1)) > 0.5 * (r_i + r_o)):
            rim_curves.append(c)
    gmsh.model.addPhysicalGroup(2, hub, name="hub")
    gmsh.model.addPhysicalGroup(2, tread, name="tread")
    gmsh.model.addPhysicalGroup(1, rim_curves, name="rim")
    gmsh.model.addPhysicalGroup(3, vols, name="volume")
    gmsh.option.setNumber("Mesh.ElementOrder", 2)
    gmsh.model.mesh.generate(3)
    _finish(filename)


BEAM = (1.0, 0.1, 0.1)  # cantilever L x b x h [m]


def _beam_jobs(series, out_dir: Path = HERE):
    jobs = []
    for cell, ns in series:
        for n in ns:
            name = f"beam_{cell}_{n[0]}x{n[1]}x{n[2]}.msh"
            jobs.append((name, lambda path=out_dir / name, cell=cell, n=n:
                         box_beam(path, BEAM, n, cell)))
    return jobs


#: Large cantilever meshes made on demand in GENERATED_DIR (same geometry, groups and
#: structured style as the shipped beams): the coarsest uniform tet4 mesh whose first
#: frequency and gravity sag are within 1% of Euler-Bernoulli (linear tetrahedra lock
#: in bending, error ~ h^2; see README.md), and the tet10 mesh that extends the
#: h-halved tet10 series for the convergence rate.
GENERATED = dict(_beam_jobs((("tet4", [(250, 25, 25)]), ("tet10", [(80, 8, 8)])),
                            GENERATED_DIR))


def ensure_mesh(name: str) -> Path:
    """Path of the mesh ``name``: a shipped file, or one of :data:`GENERATED`, which is
    generated into :data:`GENERATED_DIR` if it does not exist yet (deterministic)."""
    if name in GENERATED:
        path = GENERATED_DIR / name
        if not path.exists():
            GENERATED_DIR.mkdir(exist_ok=True)
            GENERATED[name]()
        return path
    path = HERE / name
    if not path.exists():
        known = sorted({n for n, _ in all_meshes()} | set(GENERATED))
        raise FileNotFoundError(f"mesh {name!r}: not in {HERE} and not one of the "
                                f"generated meshes; expected one of {known}")
    return path


def all_meshes():
    """(filename, generator) for every shipped mesh."""
    jobs = _beam_jobs((("hex27", [(5, 1, 1), (10, 1, 1), (20, 2, 2), (40, 4, 4)]),
                       ("hex8", [(10, 1, 1), (20, 2, 2), (40, 4, 4), (80, 8, 8)]),
                       ("tet10", [(10, 1, 1), (20, 2, 2), (40, 4, 4)]),
                       ("tet4", [(10, 1, 1), (20, 2, 2), (40, 4, 4), (80, 8, 8)])))
    jobs.append(("pendulum_hex27_25x1x1.msh",
                 lambda: box_beam("pendulum_hex27_25x1x1.msh", (1.0, 0.02, 0.02), (25, 1, 1),
                                  "hex27", faces=("pin", "tip"))))
    jobs.append(("kane_hex27_40x1x1.msh",
                 lambda: box_beam("kane_hex27_40x1x1.msh", (KANE_L, KANE_H, KANE_B),
                                  (40, 1, 1), "hex27")))
    jobs.append(("ring_hex27_24.msh",
                 lambda: ring("ring_hex27_24.msh", (0.09, 0.1), 0.02, 24)))
    jobs.append(("conrod_tet10.msh", lambda: conrod("conrod_tet10.msh", 0.011)))
    jobs.append(("conrod_tet10_fine.msh", lambda: conrod("conrod_tet10_fine.msh", 0.004)))
    jobs.append(("lug_tet10.msh", lambda: lug("lug_tet10.msh", 0.008, 0.0025)))
    for member in ("boom", "stick"):
        name = f"excavator_{member}_tet10.msh"
        jobs.append((name, lambda name=name, member=member: pin_link(name, member, 0.06)))
    return jobs + element_meshes()


def main(argv: list[str]) -> None:
    if "--generated" in argv:
        argv = [a for a in argv if a != "--generated"]
        GENERATED_DIR.mkdir(exist_ok=True)
        jobs, out = list(GENERATED.items()), GENERATED_DIR
    else:
        jobs, out = all_meshes(), HERE
    for name, make in jobs:
        if not argv or any(a in name for a in argv):
            make()
            print(f"wrote {out / name}")


if __name__ == "__main__":
    main(sys.argv[1:])
