"""The whole program on the compiled kernels and on their numpy references agrees.

``backend_probe.py`` computes body residuals and tangents, the residual and Newton
matrices of an assembled system, and a 50-step simulation, in this process (the backend
of ``FLEXMBS_KERNELS``, compiled by default) and in a subprocess on the other backend
(every module reads the switch at import, so a whole process is needed to switch the
callers that bind a kernel at import).

The references are a second formulation of the same equations that sums in other
orders: one evaluation agrees to round-off, 1e-12 relative to the largest entry of each
array (measured: at most 7e-16).  The simulation agrees to 1e-8: Newton stops once its
increment is below its tolerance, so the two runs may end a step on different iterates,
within that tolerance of each other, and the differences propagate (measured over the 50
steps: coordinates 7e-16, energy 1e-13, Lagrange multipliers 3e-10).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from backend_probe import probe

import flexmbs.compiled

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def test_compiled_and_reference_backends_agree(tmp_path):
    here = flexmbs.compiled.KERNELS
    other = "reference" if here == "compiled" else "compiled"
    out = tmp_path / f"{other}.npz"
    env = {**os.environ, "FLEXMBS_KERNELS": other,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, str(HERE / "backend_probe.py"), str(out)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    mine = probe()                                    # meanwhile, on this process's backend
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    theirs = dict(np.load(out))
    assert sorted(theirs) == sorted(mine)
    worst = {}
    for key, a in mine.items():
        b = theirs[key]
        assert a.shape == b.shape, key
        scale = np.abs(a).max(initial=0.0)
        worst[key] = np.abs(a - b).max(initial=0.0) / (scale if scale > 0 else 1.0)
    bad = {k: v for k, v in worst.items()
           if v > (1e-8 if k.startswith("simulation/") else 1e-12)}
    assert not bad, bad
