"""flexmbs.reduction: FE model -> reduction basis -> invariants -> reduced body.

Public API::

    reduce_model(fe, ReductionSettings(...)) -> flexmbs.io.bodyfile.ReducedBody
    InterfaceSpec(name, kind='rbe2'|'rbe3')
    c, I, C_r, G_r, G_e, O_e, mass_matrix            (invariants, pure functions)
    h_e, h_e_tangent                                 (geometric stiffening)
"""
from flexmbs.reduction.interfaces import InterfaceSpec
from flexmbs.reduction.invariants import C_r, G_e, G_r, I, O_e, c, mass_matrix
from flexmbs.reduction.reduce import ReductionSettings, reduce_model
from flexmbs.reduction.stiffening import h_e, h_e_tangent

__all__ = ["C_r", "G_e", "G_r", "I", "InterfaceSpec", "O_e", "ReductionSettings", "c",
           "h_e", "h_e_tangent", "mass_matrix", "reduce_model"]
