"""Reduced-body HDF5 file: round trip, read-only data, and clear errors on bad files."""
from __future__ import annotations

import h5py
import numpy as np
import pytest

from flexmbs.errors import BodyFileError
from flexmbs.io.bodyfile import ReducedBody, load_body, save_body
from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model

from .conftest import box_fe


@pytest.fixture(scope="module")
def body() -> ReducedBody:
    fe = box_fe("hex27", (4, 2, 2))
    s = ReductionSettings(n_modes=4, interfaces=(InterfaceSpec("x0"), InterfaceSpec("x1", "rbe3")),
                          frame="interface:x0", static_modes=True, damping=0.02)
    return reduce_model(fe, s, name="box")


def test_round_trip_is_exact_and_read_only(body, tmp_path):
    """Every array and attribute survives save/load bit for bit; arrays are read-only."""
    p = tmp_path / "b.h5"
    save_body(p, body)
    b = load_body(p)
    n_q = body.n_q
    # 4 fixed-interface modes, the 6 constraint modes of x1, and the inertial static
    # responses with new content (> STATIC_DROP_TOL of their norm; at most 12)
    n_static = body.provenance["n_static_modes"]
    assert 0 < n_static <= 12 and n_q == 4 + 6 + n_static
    for k in ("m", "s0", "C_t", "J0", "J1", "J2", "M_e", "I0", "I1", "I2", "C_r0", "C_r1",
              "O_e0", "O_e1", "K_e", "D_e", "K2", "K3", "omega", "zeta", "points", "cells",
              "modes", "stress_modes"):
        np.testing.assert_array_equal(getattr(b, k), getattr(body, k), err_msg=k)
    assert b.J2.shape == (n_q, n_q, 3, 3) and b.K3.shape == (n_q,) * 4
    assert b.modes.shape == (len(b.points), 3, n_q)
    assert b.stress_modes.shape == (len(b.points), 6, n_q)
    assert (b.frame, b.method, b.cell_type, b.name) == \
        ("interface:x0", "craig_bampton", "hex27", "box")
    assert [m.name for m in b.markers] == ["x0", "x1"]
    assert b.marker("x1").kind == "rbe3" and b.marker("x1").Phi.shape == (3, n_q)
    assert not np.any(b.marker("x0").Phi) and not np.any(b.marker("x0").Psi)
    np.testing.assert_array_equal(b.marker("x1").Psi, body.marker("x1").Psi)
    assert [f.name for f in b.faces] == ["x0", "x1"]
    assert b.material == body.material
    assert b.provenance["settings"]["frame"] == "interface:x0"
    assert {"numpy", "scipy", "h5py"} <= set(b.provenance["versions"])
    np.testing.assert_allclose(np.diag(b.D_e), 2 * 0.02 * b.omega)
    with pytest.raises(ValueError):
        b.M_e[0, 0] = 1.0


def _corrupt(src, dst, action):
    import shutil
    shutil.copy(src, dst)
    with h5py.File(dst, "a") as f:
        action(f)
    return dst


@pytest.mark.parametrize("action, words", [
    (lambda f: f.attrs.__setitem__("version", 2), "/version"),
    (lambda f: f.attrs.__setitem__("format", "other"), "/format"),
    (lambda f: f.__delitem__("invariants/J2"), "/invariants/J2"),
    (lambda f: (f.__delitem__("stiffness/K_e"),
                f.create_dataset("stiffness/K_e", data=np.zeros((2, 2)))), "/stiffness/K_e"),
    (lambda f: f["invariants/M_e"].__setitem__((0, 0), -1.0), "/invariants/M_e"),
    (lambda f: f["invariants/m"].write_direct(np.array(-1.0)), "/invariants/m"),
])
def test_bad_files_raise_body_file_error_naming_dataset(body, tmp_path, action, words):
    good = tmp_path / "good.h5"
    save_body(good, body)
    bad = _corrupt(good, tmp_path / "bad.h5", action)
    with pytest.raises(BodyFileError) as err:
        load_body(bad)
    assert words in str(err.value) and "bad.h5" in str(err.value)


def test_not_hdf5_and_missing_file(tmp_path):
    p = tmp_path / "junk.h5"
    p.write_bytes(b"not an hdf5 file")
    with pytest.raises(BodyFileError, match="junk.h5"):
        load_body(p)
    with pytest.raises(BodyFileError, match="does not exist"):
        load_body(tmp_path / "missing.h5")
