"""Independent beam references for the cantilever tests (not FE of the solid).

* Euler-Bernoulli closed forms: first cantilever frequency
  ``f1 = (1.8751040687)^2 / (2 pi) sqrt(E I / (rho A L^4))`` and the tip sag under
  its own weight ``w = q L^4 / (8 E I)`` (Timoshenko & Gere, *Mechanics of Materials*).
* Timoshenko beam: the same with shear deformation (and rotary inertia), shear
  coefficient of a rectangle ``kappa = 10 (1 + nu) / (12 + 11 nu)`` (Cowper 1966).
  Static tip sag ``q L^4 / (8 E I) + q L^2 / (2 kappa G A)`` (closed form); first
  frequency from a 1D Timoshenko beam FE (linear elements, reduced-integrated shear,
  consistent translational and rotary inertia) refined to 1e-6 — a second
  formulation of the same physics.
"""
from __future__ import annotations

import numpy as np

BETA1_L = 1.8751040687119611  # first root of 1 + cos(x) cosh(x) = 0


def section(b: float, h: float) -> tuple[float, float]:
    """Area and second moment ``b h^3 / 12`` of a b x h rectangle."""
    return b * h, b * h ** 3 / 12.0


def kappa_rect(nu: float) -> float:
    return 10.0 * (1.0 + nu) / (12.0 + 11.0 * nu)


def f1_euler_bernoulli(E, rho, L, b, h) -> float:
    A, I = section(b, h)
    return BETA1_L ** 2 / (2 * np.pi) * np.sqrt(E * I / (rho * A * L ** 4))


def sag_euler_bernoulli(E, rho, L, b, h, g=9.81) -> float:
    A, I = section(b, h)
    return rho * A * g * L ** 4 / (8 * E * I)


def sag_timoshenko(E, nu, rho, L, b, h, g=9.81) -> float:
    A, _ = section(b, h)
    G = E / (2 * (1 + nu))
    q = rho * A * g
    return sag_euler_bernoulli(E, rho, L, b, h, g) + q * L ** 2 / (2 * kappa_rect(nu) * G * A)


def f1_timoshenko(E, nu, rho, L, b, h, n_el: int = 2000) -> float:
    """First bending frequency of a Timoshenko cantilever, 1D FE (w, theta per node)."""
    A, I = section(b, h)
    G = E / (2 * (1 + nu))
    kGA = kappa_rect(nu) * G * A
    le = L / n_el
    # element matrices, dofs (w1, t1, w2, t2); shear with one-point (reduced) rule
    Kb = E * I / le * np.array([[0, 0, 0, 0], [0, 1, 0, -1], [0, 0, 0, 0], [0, -1, 0, 1.0]])
    Bs = np.array([-1 / le, -0.5, 1 / le, -0.5])
    Ks = kGA * le * np.outer(Bs, Bs)
    m2 = le / 6 * np.array([[2, 1], [1, 2.0]])
    Me = np.zeros((4, 4))
    Me[np.ix_([0, 2], [0, 2])] = rho * A * m2
    Me[np.ix_([1, 3], [1, 3])] = rho * I * m2
    n = 2 * (n_el + 1)
    from scipy.sparse import lil_matrix
    K, M = lil_matrix((n, n)), lil_matrix((n, n))
    for e in range(n_el):
        d = np.arange(2 * e, 2 * e + 4)
        K[np.ix_(d, d)] += Kb + Ks
        M[np.ix_(d, d)] += Me
    free = np.arange(2, n)
    from scipy.sparse.linalg import eigsh
    lam = eigsh(K.tocsc()[free][:, free], 1, M.tocsc()[free][:, free], sigma=0.0,
                which="LM")[0]
    return float(np.sqrt(lam[0]) / (2 * np.pi))


if __name__ == "__main__":
    print(f1_euler_bernoulli(210e9, 7850, 1, .1, .1), f1_timoshenko(210e9, .3, 7850, 1, .1, .1))
