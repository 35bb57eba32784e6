"""Damaged input files and unusable output paths: one line naming the file (or option),
what was expected and what was found, exit status 2, no traceback; MSH 2.2 physical
groups read like those of MSH 4.1."""
from __future__ import annotations

import os
from pathlib import Path

import h5py
import numpy as np
import pytest

from flexmbs.cli.main import main
from flexmbs.errors import BodyFileError, CaseError, MeshError
from flexmbs.io.bodyfile import load_body
from flexmbs.io.mesh import read_mesh

MESHES = Path(__file__).resolve().parents[2] / "meshes"
BEAM = MESHES / "beam_hex8_10x1x1.msh"


def one_error_line(err: str, cmd: str, *needles: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err
    errors = [ln for ln in lines if ln.startswith(f"flexmbs {cmd}: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], err
    for n in needles:
        assert n in errors[0], f"{n!r} not in {errors[0]!r}"
    return errors[0]


@pytest.fixture(scope="module")
def body_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("body") / "beam.h5"
    assert main(["preprocess", str(BEAM), "--material", "steel", "--modes", "3",
                 "--interface", "clamp", "--interface", "tip:rbe3", "-o", str(out)]) == 0
    return out


def _info(path, capsys, *needles):
    capsys.readouterr()
    assert main(["info", str(path)]) == 2
    return one_error_line(capsys.readouterr().err, "info", str(path), *needles)


# -- 2. body files ----------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["superblock", "stiffness/K_e", "invariants/J2",
                                    "mesh/modes", "markers/tip/Phi"])
def test_body_file_with_garbage_inside(body_file, tmp_path, capsys, target):
    """Random bytes over the file header or over a dataset's stored data: datasets carry
    Fletcher-32 checksums, so damaged data is an error, not garbage values."""
    data = bytearray(body_file.read_bytes())
    if target == "superblock":
        start, size = 0, 64
    else:
        with h5py.File(body_file, "r") as f:
            info = f[target].id.get_chunk_info(0)
        start, size = info.byte_offset, min(info.size, 256)
    data[start:start + size] = np.random.default_rng(0).bytes(size)
    bad = tmp_path / "garbage.h5"
    bad.write_bytes(bytes(data))
    _info(bad, capsys, "body file", "" if target == "superblock" else target)


@pytest.mark.parametrize("edit, needles", [
    (lambda f: f["stiffness/K_e"].__setitem__((0, 0), np.nan), ["/stiffness/K_e", "finite"]),
    (lambda f: f["invariants/J1"].__setitem__((0, 0, 0), np.inf), ["/invariants/J1", "finite"]),
    (lambda f: f.attrs.__setitem__("version", "one"), ["/version", "'one'", "integer 1"]),
    (lambda f: f.attrs.__setitem__("version", 2), ["/version", "got 2"]),
    (lambda f: f.__delitem__("markers"), ["/markers", "missing"]),
    (lambda f: f["markers/tip"].attrs.__delitem__("order"), ["/markers/tip/order", "missing"]),
    (lambda f: f["provenance"].attrs.__setitem__("json", "{bad"), ["/provenance/json", "JSON"]),
    (lambda f: f["mesh/cells"].__setitem__((0, 0), 10**6), ["/mesh/cells", "index"]),
    (lambda f: f["material"].attrs.__delitem__("E"), ["/material/E", "finite number"]),
    (lambda f: f["mesh"].attrs.__setitem__("cell_type", "hex99"), ["/mesh/cell_type"]),
])
def test_damaged_body_file(body_file, tmp_path, capsys, edit, needles):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(body_file.read_bytes())
    with h5py.File(bad, "r+") as f:
        edit(f)
    line = _info(bad, capsys, *needles)
    with pytest.raises(BodyFileError):
        load_body(bad)
    assert "\n" not in line


def test_intact_body_file(body_file, capsys):
    assert main(["info", str(body_file)]) == 0
    assert "marker 'tip' (rbe3" in capsys.readouterr().out


# -- 6. meshes ----------------------------------------------------------------------------------
@pytest.mark.parametrize("data, needles", [
    (b"", ["empty file"]),
    (b"\n\n  \n", ["empty file"]),
    (BEAM.read_bytes()[:1500], ["truncated or damaged"]),
    (BEAM.read_bytes()[:100], ["truncated or damaged"]),
    (bytes(range(256)) * 8, ["'$MeshFormat'", "binary data"]),
    (b"\xff\xfe\x00garbage" * 100, ["'$MeshFormat'", "binary data"]),
    (BEAM.read_bytes().replace(b"4.1 0 8", b"3.0 0 8", 1), ["version", "'3.0'"]),
])
def test_damaged_mesh_file(tmp_path, capsys, data, needles):
    bad = tmp_path / "bad.msh"
    bad.write_bytes(data)
    rc = main(["preprocess", str(bad), "--material", "steel", "--modes", "2",
               "-o", str(tmp_path / "out.h5")])
    cap = capsys.readouterr()
    assert rc == 2
    line = one_error_line(cap.err, "preprocess", str(bad), "could not be read", *needles)
    for bad_word in ("SystemExit", "UnicodeDecodeError", "cannot reshape"):
        assert bad_word not in line
    assert "Couldn't read" not in cap.out + cap.err           # meshio's own printing


def test_msh22_node_tag_nan_fails_fast(tmp_path):
    """A node tag 'nan' made meshio allocate 2^31 ints (10+ s, 8 GB) before failing."""
    import meshio
    m = meshio.read(BEAM, file_format="gmsh")
    src = tmp_path / "b22.msh"
    meshio.write(src, m, file_format="gmsh22", binary=False)
    text = src.read_text().replace("\n8 1.0", "\nnan 1.0", 1)
    assert "\nnan 1.0" in text
    bad = tmp_path / "nan.msh"
    bad.write_text(text)
    with pytest.raises(MeshError, match=r"node tags 1\.\.\d+.*found 'nan'"):
        read_mesh(bad)


@pytest.mark.parametrize("fmt", ["gmsh22", "gmsh"])
def test_binary_msh_huge_node_tag_fails_fast(tmp_path, fmt):
    """A binary MSH (2.2 or 4.1) whose node tag was damaged to 2^40: meshio would size
    arrays by the largest tag; the tag is found before it reads.  The same file with its
    tags intact reads to the same nodes."""
    good = tmp_path / "good.msh"
    if fmt == "gmsh22":
        import meshio
        meshio.write(good, meshio.read(BEAM, file_format="gmsh"), file_format=fmt,
                     binary=True)
    else:                                          # as gmsh writes it
        import gmsh
        gmsh.initialize(["-v", "0"])
        try:
            gmsh.open(str(BEAM))
            gmsh.option.setNumber("Mesh.Binary", 1)
            gmsh.write(str(good))
        finally:
            gmsh.finalize()
    np.testing.assert_allclose(read_mesh(good).points, read_mesh(BEAM).points)
    data = bytearray(good.read_bytes())
    at = data.find(b"$Nodes\n") + 7
    if fmt == "gmsh":                              # header: blocks, nodes, min, max tag
        data[at + 24:at + 32] = np.array([2**40], "<u8").tobytes()
    else:                                          # count line, then (int tag, 3 doubles)
        at = data.find(b"\n", at) + 1
        data[at:at + 4] = np.array([2**31 - 1], "<i4").tobytes()
    bad = tmp_path / "bad.msh"
    bad.write_bytes(bytes(data))
    with pytest.raises(MeshError, match=r"binary \$Nodes section, found the node tag \d+"):
        read_mesh(bad)


def test_msh22_physical_groups(tmp_path):
    """The same mesh written as MSH 2.2 has the node, facet and cell sets of MSH 4.1."""
    import meshio
    m = meshio.read(BEAM, file_format="gmsh")
    path = tmp_path / "beam22.msh"
    meshio.write(path, m, file_format="gmsh22", binary=False)
    assert path.read_text().startswith("$MeshFormat\n2.2")
    m22, m41 = read_mesh(path), read_mesh(BEAM)
    assert sorted(m22.node_sets) == sorted(m41.node_sets) == ["clamp", "tip", "volume"]
    for k in m41.node_sets:
        np.testing.assert_array_equal(m22.node_sets[k], m41.node_sets[k])
    for k in m41.facet_sets:
        np.testing.assert_array_equal(m22.facet_sets[k], m41.facet_sets[k])
    np.testing.assert_array_equal(m22.cell_sets["volume"], m41.cell_sets["volume"])


@pytest.mark.parametrize("edit, match", [
    (lambda p, c: (p, c.__setitem__((0, 1), c[0, 0])), "naming a node twice"),
    (lambda p, c: (p.__setitem__((3, 0), np.nan), c), "finite node coordinates"),
    (lambda p, c: (p.__setitem__((3, 0), 1e300), c), "coordinates below"),
    (lambda p, c: (p, c.__setitem__((0, 0), 10**6)), "node ids 0..43"),
])
def test_invalid_mesh_content(edit, match):
    import meshio

    from flexmbs.io.mesh import mesh_from_meshio
    m = meshio.read(BEAM, file_format="gmsh")
    points = np.array(m.points)
    cells = [meshio.CellBlock(c.type, np.array(c.data)) for c in m.cells]
    hexa = next(c.data for c in cells if c.type == "hexahedron")
    edit(points, hexa)
    with pytest.raises(MeshError, match=match):
        mesh_from_meshio(meshio.Mesh(points, cells), source="edited")


CAE = """*Node
1, 1., 1., 1.
2, 1., 0., 1.
3, 1., 1., 0.
4, 1., 0., 0.
5, 0., 1., 1.
6, 0., 0., 1.
7, 0., 1., 0.
8, 0., 0., 0.
*Element, type=C3D8
1, 5, 6, 8, 7, 1, 2, 4, 3
*Elset, elset=_S2
 1,
*Surface, type=ELEMENT, name=Surf-1
_S2, S2
"""


@pytest.mark.parametrize("edit, match", [
    (lambda t: t.replace("*Element, type=C3D8\n1, 5, 6, 8, 7, 1, 2, 4, 3\n", ""),
     "expected \\*ELEMENT lines"),                                    # was ValueError
    (lambda t: t.replace("*Element, type=C3D8", "*Element, type=C3D4\n*Element, "
                         "type=C3D8"), "cannot map element labels"),   # was IndexError
    (lambda t: t.replace("*Elset, elset=_S2", "*Element, type=C3D8\n*Elset, elset=_S2"),
     "cannot map element labels"),                                     # was IndexError
])
def test_damaged_abaqus_file(tmp_path, edit, match):
    """Found by fuzzing .inp files: each an exception escaping before."""
    path = tmp_path / "part.inp"
    path.write_text(CAE)
    assert sorted(read_mesh(path).facet_sets) == ["Surf-1"]
    path.write_text(edit(CAE))
    with pytest.raises(MeshError, match=r"part\.inp.*" + match):
        read_mesh(path)


def test_abaqus_element_set_without_name(tmp_path):
    """``*Element, elset`` without a value: meshio stores a set named None (was an
    AttributeError); the mesh reads, the surface too."""
    path = tmp_path / "part.inp"
    path.write_text(CAE.replace("*Element, type=C3D8", "*Element, type=C3D8, elset"))
    assert sorted(read_mesh(path).facet_sets) == ["Surf-1"]


# -- 4, 5. output paths -------------------------------------------------------------------------
def _read_only_dir() -> Path | None:
    """A folder that refuses new files even for root (/sys), else None."""
    for p in (Path("/sys"), Path("/proc")):
        if p.is_dir():
            try:
                (p / "flexmbs-write-test").touch()
            except OSError:
                return p
    return None


def test_writable_dir(tmp_path):
    from flexmbs.io.paths import writable_dir
    assert writable_dir(tmp_path) == tmp_path
    assert writable_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()                       # nothing created
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(CaseError, match=r"--out '.*file': expected a folder, found an "
                                        r"existing file"):
        writable_dir(f)
    with pytest.raises(CaseError, match=r"--out '/dev/null': expected a folder, found a "
                                        r"device"):
        writable_dir(os.devnull)
    with pytest.raises(CaseError, match=r"--body-dir .*'.*file' is an existing file, not a "
                                        r"folder"):
        writable_dir(f / "sub", "--body-dir")
    ro = _read_only_dir()
    if ro is not None:
        with pytest.raises(CaseError, match="refuses new files"):
            writable_dir(ro)
        with pytest.raises(CaseError, match="refuses new files"):
            writable_dir(ro / "results")


def test_writable_file(tmp_path):
    from flexmbs.io.paths import writable_file
    mesh = tmp_path / "part.msh"
    mesh.write_text("x")
    assert writable_file(tmp_path / "b.h5") == tmp_path / "b.h5"
    with pytest.raises(CaseError, match="found the input file"):
        writable_file(tmp_path / "sub" / ".." / "part.msh", not_same_as=(mesh,))
    with pytest.raises(CaseError, match="found a folder"):
        writable_file(tmp_path)
    with pytest.raises(CaseError, match="found a device"):
        writable_file(os.devnull)
    with pytest.raises(CaseError, match=r"expected an existing folder, found no folder"):
        writable_file(tmp_path / "missing" / "b.h5")


@pytest.mark.parametrize("output, needles", [
    ("{tmp}/missing/b.h5", ["-o", "missing", "existing folder"]),
    ("{tmp}", ["-o", "found a folder"]),
    (os.devnull, ["-o", "found a device"]),
    ("{mesh}", ["-o", "input file", "overwritten"]),
    ("{ro}/b.h5", ["-o", "refuses new files"]),
])
def test_preprocess_checks_output_before_work(tmp_path, capsys, output, needles):
    """Checked before the mesh is read (no 'read mesh' step printed)."""
    mesh = tmp_path / "part.msh"
    mesh.write_bytes(BEAM.read_bytes())
    ro = _read_only_dir()
    if "{ro}" in output and ro is None:
        pytest.skip("no read-only folder on this machine")
    out = output.format(tmp=tmp_path, mesh=mesh, ro=ro)
    rc = main(["preprocess", str(mesh), "--material", "steel", "--modes", "2", "-o", out])
    err = capsys.readouterr().err
    assert rc == 2
    one_error_line(err, "preprocess", *needles)
    assert "read mesh" not in err
    assert mesh.read_bytes() == BEAM.read_bytes()


def test_check_body_dir_is_a_file(tmp_path, capsys):
    case = Path(__file__).resolve().parents[2] / "cases" / "slider_crank" / "case.toml"
    f = tmp_path / "bodies"
    f.write_text("")
    assert main(["check", str(case), "--body-dir", str(f)]) == 2
    one_error_line(capsys.readouterr().err, "check", "--body-dir", "found an existing file")
