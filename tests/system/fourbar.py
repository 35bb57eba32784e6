"""Four-bar linkage shared by the tests: geometry, flexmbs models, and an independent
minimal-coordinate solution (Lagrange's equation in the crank angle, THEORY (2.82)).

Links (Exudyn's spatial four-bar, PEER_EXUDYN.md): crank a = 0.1 m, coupler b = 0.4 m,
rocker c = 0.3 m, ground d = 0.35 m; steel bars 10 x 10 mm; gravity -y; the crank starts
at phi0 with rate phid0.
"""
import numpy as np
from scipy.integrate import solve_ivp

import flexmbs as fm
from flexmbs.constraints.universal import Universal
from flexmbs.kinematics.rotation import matrix_from_axis_angle

A_, B_, C_, D_ = 0.1, 0.4, 0.3, 0.35
W, RHO, G = 0.01, 7850.0, 9.81


def angles(phi):
    """Coupler and rocker angles (theta, psi) for crank angle phi (open assembly)."""
    bx, by = A_ * np.cos(phi), A_ * np.sin(phi)
    dx, dy = D_ - bx, -by                      # from B to D
    e = np.hypot(dx, dy)
    # triangle B-C-D with sides b (BC), c (CD), e (BD)
    beta = np.arccos((B_**2 + e**2 - C_**2) / (2 * B_ * e))
    theta = np.arctan2(dy, dx) + beta          # coupler direction (C above the line BD)
    cx, cy = bx + B_ * np.cos(theta), by + B_ * np.sin(theta)
    psi = np.arctan2(cy, cx - D_)              # rocker direction from D to C
    return theta, psi


def link(name, length, start, angle, omega=0.0):
    R0 = matrix_from_axis_angle([0, 0, 1], angle)
    body = fm.RigidBody.box(name, (length, W, W), RHO, com=(length / 2, 0, 0), r0=start, R0=R0,
                            v0=np.cross([0, 0, omega], np.zeros(3)), omega0=(0, 0, omega))
    return body


def rates(phi, phid):
    """Angular rates of coupler and rocker, and the joint-point velocities (finite diff.)."""
    h = 1e-7
    th1, ps1 = angles(phi + h)
    th0, ps0 = angles(phi - h)
    return (th1 - th0) / (2 * h) * phid, (ps1 - ps0) / (2 * h) * phid


def build(phi0, phid0, kind="RRSU"):
    theta, psi = angles(phi0)
    thd, psd = rates(phi0, phid0)
    B = np.array([A_ * np.cos(phi0), A_ * np.sin(phi0), 0.0])
    C = B + B_ * np.array([np.cos(theta), np.sin(theta), 0.0])
    D = np.array([D_, 0.0, 0.0])
    crank = link("crank", A_, (0, 0, 0), phi0, phid0)
    vB = np.cross([0, 0, phid0], B)
    coupler = fm.RigidBody.box("coupler", (B_, W, W), RHO, com=(B_ / 2, 0, 0), r0=B,
                               R0=matrix_from_axis_angle([0, 0, 1], theta), v0=vB,
                               omega0=(0, 0, thd))
    rocker = fm.RigidBody.box("rocker", (C_, W, W), RHO, com=(C_ / 2, 0, 0), r0=D,
                              R0=matrix_from_axis_angle([0, 0, 1], psi), omega0=(0, 0, psd))
    model = fm.System(gravity=(0, -G, 0), name=f"fourbar_{kind}")
    model.add(fm.Revolute("A", fm.ground, crank, at=(0, 0, 0), axis="z"),
              fm.Revolute("B", crank, coupler, at=B, axis="z"))
    if kind == "RRSU":
        model.add(fm.Spherical("C", coupler, rocker, at=C))
        # universal at D: free axes z (fixed in the ground) and the in-plane normal of the
        # rocker; the blocked axis is the rocker's own line, so it cannot spin about it
        u = (C - D) / np.linalg.norm(C - D)
        n_perp = np.cross([0, 0, 1.0], u)
        R = np.column_stack([n_perp, [0, 0, 1.0], np.cross(n_perp, [0, 0, 1.0])])
        Rr = matrix_from_axis_angle([0, 0, 1], psi)
        model.add(Universal("D", rocker.marker("D", (0, 0, 0), Rr.T @ R),
                            fm.ground.marker("D", D, R)))
    else:
        model.add(fm.Revolute("C", coupler, rocker, at=C, axis="z"),
                  fm.Revolute("D", rocker, fm.ground, at=D, axis="z"))
    return model, (crank, coupler, rocker)


def _e(a):
    return np.array([np.cos(a), np.sin(a)])


def _ep(a):
    return np.array([-np.sin(a), np.cos(a)])


def kinematics(phi, phid, phidd):
    """Exact position, velocity and acceleration analysis of the loop
    a e(phi) + b e(theta) - c e(psi) - d x = 0, differentiated once and twice (2x2 solves)."""
    theta, psi = angles(phi)
    Mx = np.column_stack([B_ * _ep(theta), -C_ * _ep(psi)])
    thd, psd = np.linalg.solve(Mx, -A_ * phid * _ep(phi))
    rhs = (-A_ * phidd * _ep(phi) + A_ * phid**2 * _e(phi) + B_ * thd**2 * _e(theta)
           - C_ * psd**2 * _e(psi))
    thdd, psdd = np.linalg.solve(Mx, rhs)
    ang = (phi, theta, psi)
    angd = (phid, thd, psd)
    angdd = (phidd, thdd, psdd)
    # centres of mass: c1 = a/2 e(phi), c2 = a e(phi) + b/2 e(theta), c3 = d x + c/2 e(psi)
    def acc(L, k):
        return L * (angdd[k] * _ep(ang[k]) - angd[k] ** 2 * _e(ang[k]))
    def vel(L, k):
        return L * angd[k] * _ep(ang[k])
    cd = [vel(A_ / 2, 0), vel(A_, 0) + vel(B_ / 2, 1), vel(C_ / 2, 2)]
    cdd = [acc(A_ / 2, 0), acc(A_, 0) + acc(B_ / 2, 1), acc(C_ / 2, 2)]
    return cd, cdd, angd, angdd


def minimal_solution(phi0, phid0, t_eval):
    """Crank angle phi(t) from d'Alembert's principle in the one coordinate phi
    (THEORY (2.82)): sum_i m_i cdd_i . dc_i/dphi + I_i alpha_i dtheta_i/dphi
    + m_i g dy_i/dphi = 0, with exact kinematics (no numerical differentiation)."""
    m_link = [RHO * L * W * W for L in (A_, B_, C_)]
    I_link = [m * (L**2 + W**2) / 12 for m, L in zip(m_link, (A_, B_, C_))]

    def rhs(t, y):
        phi, phid = y
        u, _, kappa, _ = kinematics(phi, 1.0, 0.0)          # velocity coefficients
        _, w, _, beta = kinematics(phi, phid, 0.0)          # accelerations without phidd
        num = sum(m * wi @ ui + I * bi * ki + m * G * ui[1]
                  for m, I, ui, wi, ki, bi in zip(m_link, I_link, u, w, kappa, beta))
        den = sum(m * ui @ ui + I * ki**2 for m, I, ui, ki in zip(m_link, I_link, u, kappa))
        return [phid, -num / den]

    sol = solve_ivp(rhs, (0, t_eval[-1]), [phi0, phid0], t_eval=t_eval, method="DOP853",
                    rtol=1e-11, atol=1e-12)
    return sol.y[0]
