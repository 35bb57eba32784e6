"""PETSc options: prefix, defaults, user options, command line wins, inserted while solving."""
import numpy as np
import pytest
from int_models import Pendulum
from petsc4py import PETSc

from flexmbs.integrate import (
    GeneralizedAlpha,
    OptionsManager,
    consistent_initial_conditions,
    petsc_options_from_args,
)


def run(prefix, **kw):
    dae = Pendulum()
    cs = consistent_initial_conditions(dae, [0.6, -0.8], [0.0, 0.0])
    ga = GeneralizedAlpha(dae, options_prefix=prefix, **kw)
    ga.run(cs.q, cs.qd, cs.qdd, cs.lam, 0.0, 0.05, h=0.01)
    return ga


def factor_type(ga):
    return ga.snes.getKSP().getPC().getFactorSolverType()


def test_default_is_direct_lu():
    """Small Newton matrices: dense, LAPACK LU (partial pivoting); with
    ``newton_mat_type aij`` (or above ``DENSE_MAX``) the sparse package."""
    ga = run("fmbs_t1_")
    assert ga.snes.getKSP().getType() == "preonly"
    assert ga.snes.getKSP().getPC().getType() == "lu"
    assert ga.newton.J.getType() == "seqdense"
    assert factor_type(ga) == "petsc"
    assert ga.snes.getType() == "newtonls"
    assert not PETSc.Options().hasName("fmbs_t1_pc_type")  # removed after the solve
    ga = run("fmbs_t1b_", petsc_options={"newton_mat_type": "aij"})
    has_umf = any(PETSc.Sys.hasExternalPackage(p) for p in ("umfpack", "suitesparse"))
    expected = ("superlu" if PETSc.Sys.hasExternalPackage("superlu") else
                "umfpack" if has_umf else
                "mumps" if PETSc.Sys.hasExternalPackage("mumps") else "petsc")
    assert ga.newton.J.getType() == "seqaij"
    assert factor_type(ga) == expected


def test_dense_and_sparse_newton_matrices_give_the_same_trajectory():
    """Second formulation: the same steps with the sparse LU agree to round-off."""
    a = run("fmbs_t1c_", petsc_options={"newton_mat_type": "dense"}).final_state
    b = run("fmbs_t1d_", petsc_options={"newton_mat_type": "aij"}).final_state
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.lam, b.lam, rtol=1e-9, atol=1e-12)


def test_bad_newton_mat_type_is_a_clear_error():
    with pytest.raises(ValueError, match="newton_mat_type: expected auto, dense or aij, "
                                         "got 'csr'"):
        run("fmbs_t1e_", petsc_options={"newton_mat_type": "csr"})


def test_user_options_and_command_line_win():
    ga = run("fmbs_t2_", petsc_options={"pc_factor_mat_solver_type": "petsc",
                                        "pc_factor_nonzeros_along_diagonal": 1e-12})
    assert factor_type(ga) == "petsc"
    inserted = petsc_options_from_args(["-fmbs_t3_pc_factor_mat_solver_type", "umfpack",
                                        "-fmbs_t3_snes_converged_reason_x", "-1"])
    try:
        assert inserted["fmbs_t3_pc_factor_mat_solver_type"] == "umfpack"
        assert inserted["fmbs_t3_snes_converged_reason_x"] == "-1"
        ga = run("fmbs_t3_", petsc_options={"pc_factor_mat_solver_type": "superlu_dist"})
        assert factor_type(ga) == "umfpack"
        assert PETSc.Options().getString("fmbs_t3_pc_factor_mat_solver_type") == "umfpack"
    finally:
        for k in inserted:
            PETSc.Options().delValue(k)


def test_prefix_mandatory_and_parsing_errors():
    with pytest.raises(ValueError, match="prefix is mandatory"):
        OptionsManager("")
    with pytest.raises(ValueError, match="does not follow"):
        petsc_options_from_args(["umfpack"])
    assert OptionsManager("abc").prefix == "abc_"


def test_ts_options_prefix():
    from flexmbs.integrate import integrate
    seen = {}

    def cb(t, q, qd, qdd, lam, stats):
        seen["n"] = stats.steps

    tr = integrate(Pendulum(), [0.6, -0.8], [0.0, 0.0], 0.1, method="ts", h=1e-3,
                   options_prefix="fmbs_t4_", petsc_options={"ts_type": "beuler"},
                   callback=cb, store=True)
    assert tr.stats.steps == seen["n"] > 0
    assert np.all(np.isfinite(tr.q))


def test_set_from_options_names_a_bad_value():
    """PETSc's error 63 in a solver's own setFromOptions (a value it cannot read) is an
    OptionValueError naming the option, the type PETSc's reader expected and the value."""
    from petsc4py import PETSc
    from flexmbs.integrate.options import OptionsManager, OptionValueError
    snes = PETSc.SNES().create(PETSc.COMM_SELF)
    try:
        with pytest.raises(OptionValueError) as err:
            OptionsManager("fmbs_badvalue_", {"snes_rtol": 1e-8},
                           {"snes_max_it": "abc"}).set_from_options(snes)
    finally:
        snes.destroy()
    assert (err.value.key, err.value.value, err.value.expected) == ("snes_max_it", "abc",
                                                                    "an integer")
    assert not PETSc.Options().hasName("fmbs_badvalue_snes_max_it")
