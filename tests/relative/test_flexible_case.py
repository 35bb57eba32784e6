"""A case file with a flexible body in the relative formulation runs from the CLI:
``tests/relative/flexible_pendulum_relative.toml`` (cases/flexible_pendulum with
``[model] formulation = "relative"``, shortened to 0.2 s), checked against independent
references: conservation of T + V (no damping, rho_inf = 1) and the same case in the
absolute formulation (the descriptor form; the two generalized-alpha runs differ by
their O(h^2) errors only).
"""
from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from flexmbs.cli.main import main
from flexmbs.kinematics.rotation import A_of

CASE = Path(__file__).resolve().parent / "flexible_pendulum_relative.toml"


def run(case: Path, out: Path) -> dict:
    assert main(["run", str(case), "--out", str(out), "--quiet", "--t-end", "0.2",
                 "--no-plots", "--no-xdmf"]) == 0
    with h5py.File(out / "flexible_pendulum.h5") as f:
        assert f.attrs["status"] == "complete"
        q = f["bodies/pendulum/q"][()]
        # the bar's axis x of the frame (at the pin), scaled by the 1 m length [m]
        return {"E": f["energy/total"][()], "T": f["energy/kinetic"][()], "q": q,
                "axis": np.array([A_of(e)[:, 0] for e in q[:, 3:7]])}


def test_flexible_pendulum_case_in_the_relative_formulation(tmp_path):
    rel = run(CASE, tmp_path / "relative")
    assert rel["T"].max() > 1.0
    assert np.abs(rel["q"][:, 7:]).max() > 0                 # it deforms
    assert np.abs(rel["E"] - rel["E"][0]).max() < 1e-4 * rel["T"].max()
    absolute = tmp_path / "absolute.toml"
    absolute.write_text(CASE.read_text().replace('formulation = "relative"',
                                                 'formulation = "absolute"')
                        .replace("../../meshes", str(CASE.parents[2] / "meshes")))
    ref = run(absolute, tmp_path / "absolute")
    assert np.abs(rel["axis"][-1] - rel["axis"][0]).max() > 0.05     # it swings
    diff = np.abs(rel["axis"] - ref["axis"]).max()
    print(f"bar axis: relative - absolute {diff:.2e} m, elastic coordinates "
          f"{np.abs(rel['q'][:, 7:] - ref['q'][:, 7:]).max():.2e} "
          f"(largest {np.abs(ref['q'][:, 7:]).max():.2e})")
    assert diff < 1e-5
