"""The solver defaults, in one place: :data:`DEFAULTS`, a frozen :class:`SolverSettings`.

Every entry point that integrates or solves takes its defaults from here:
:func:`flexmbs.simulate`, :func:`flexmbs.integrate.integrate`,
:func:`flexmbs.simulate.static_equilibrium` and the case service behind ``flexmbs run``
(:mod:`flexmbs.case.service`), so that the Python API and a case file without a
``[solver]`` key run the same integrator.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SolverSettings:
    """The defaults of the time integrators and the static solver.

    Attributes
    ----------
    method : str
        ``"genalpha"`` (generalized-α, Arnold & Brüls 2007, on the index-3 form) or
        ``"ts"`` (PETSc TS on the stabilised index-2 GGL form).
    t0 : float
        Start time [s].
    rho_inf : float
        Spectral radius of generalized-α at infinite frequency [-]; 1 is no numerical
        damping.  0.9 damps the spurious high frequencies of constrained and stiff
        flexible models and keeps second order (docs/solver.md).
    adaptive : bool
        Error-controlled step size (``rtol``, ``atol``); else fixed steps ``dt``.
    rtol : float
        Relative local error tolerance [-] of adaptive steps and of PETSc TS.
    atol : float
        Absolute local error tolerance [m | rad] of adaptive steps and of PETSc TS.
    options_prefix : str
        PETSc options prefix of the time integrator's SNES/KSP/PC (and TS):
        ``-fmbs_pc_factor_mat_solver_type mumps`` on the command line.
    static_options_prefix : str
        PETSc options prefix of the static equilibrium solver.
    project_velocity : bool
        Report velocities projected onto the velocity constraints ``G qd = -g_t``
        (minimum-norm change); the integration continues from the unprojected velocity,
        so only the reported values (outputs, sensors, energies) change.
    jacobian_reuse : bool
        Keep the Newton matrix across iterations and steps while Newton contracts well.
    jacobian_cost : float or None
        With ``jacobian_reuse``: start a step with a fresh Newton matrix when that is
        expected to save more than this many Newton iterations [-]; ``None``: reuse
        whenever Newton contracts.
    newton_rtol : float or None
        Newton stops when its estimated remaining error is below this fraction [-] of the
        first Newton correction; ``None``: SNES's own tests.
    compiled_loop : bool
        Run the fixed steps of models on the compiled step path in a compiled loop
        (:mod:`flexmbs.integrate.steps_kernel`); ``False`` (or ``FLEXMBS_KERNELS=
        reference``) steps in Python with PETSc SNES (same results to the Newton
        tolerance).
    load_steps : int
        Number of equal load increments of the static equilibrium solve [-].
    """

    method: str = "genalpha"
    t0: float = 0.0
    rho_inf: float = 0.9
    adaptive: bool = False
    rtol: float = 1e-4
    atol: float = 1e-6
    options_prefix: str = "fmbs_"
    static_options_prefix: str = "fmbs_static_"
    project_velocity: bool = True
    jacobian_reuse: bool = True
    jacobian_cost: float | None = 2.0
    newton_rtol: float | None = 1e-5
    compiled_loop: bool = True
    load_steps: int = 1

    def genalpha_options(self) -> dict:
        """Keyword arguments of :class:`~flexmbs.integrate.genalpha.GeneralizedAlpha`
        besides ``rho_inf``, the prefix and the PETSc options: the Newton settings."""
        return {"jacobian_reuse": self.jacobian_reuse, "jacobian_cost": self.jacobian_cost,
                "newton_rtol": self.newton_rtol}


#: the defaults of every solver entry point
DEFAULTS = SolverSettings()
