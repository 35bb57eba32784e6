"""Columns of the per-element tables of the compiled joint friction
(:mod:`flexmbs.forces.friction_kernel`, :mod:`flexmbs.forces.friction_reference`).

``fr_int`` (k, 9) int64, one row per friction element:

    kind (KIND_CODES), marker P, marker Q (indices into the stacked frames ``C``, ``D``),
    first state z (global coordinate; W follows the d bristle states), first and
    one-past-last row of the joint (among all rows), first column of the translational
    coordinates of the body the reaction acts on, its sign (-1: Q's body, +1: P's body
    for a joint to the ground), from_reaction (1/0)

``fr_par`` (k, 10) float64:

    mu_s, mu_k [-], v_s [m/s] (the effective Stribeck velocity), c_v [N s/m],
    sigma0 [1/m], sigma1 [s/m], eps [m/s], v_d [m/s], pin radius r [m], preload N_0 [N]
"""
from __future__ import annotations

#: joint kind -> code in ``fr_int``; number of friction directions per code
KIND_CODES = {"revolute": 0, "prismatic": 1, "cylindrical": 2, "spherical": 3}
N_DIRECTIONS = (1, 1, 2, 3)

I_KIND, I_MP, I_MQ, I_Z, I_ROW0, I_ROW1, I_COL, I_SIGN, I_REACT = range(9)
N_INT = 9
P_MU_S, P_MU_K, P_V_S, P_C_V, P_SIGMA0, P_SIGMA1, P_EPS, P_V_D, P_R, P_N0 = range(10)
N_PAR = 10
