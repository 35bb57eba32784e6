"""flexmbs.post: trajectory and state -> linear models, modes, Campbell diagrams, recovery.

* :mod:`~flexmbs.post.linearize`: ``linearize``, ``modes``, ``equilibrium``,
  ``steady_state`` (relative equilibrium of a steadily driven system);
* :mod:`~flexmbs.post.campbell`: ``campbell(model_factory, values)`` and ``plot_campbell``;
* :mod:`~flexmbs.post.recovery`: deformed positions, displacements, von Mises stress
  (with the static correction of the interface loads);
* :mod:`~flexmbs.post.interface_loads`: ``marker_wrenches``, the load at each marker;
* :mod:`~flexmbs.post.hotspots`: stress history of named nodes, rainflow and Miner damage;
* :mod:`~flexmbs.post.extrema`: per-node maximum over time (max von Mises and its time);
* :mod:`~flexmbs.post.scene`: the whole mechanism as XDMF grids.
"""
from flexmbs.post.campbell import CampbellTable, campbell, plot_campbell
from flexmbs.post.interface_loads import marker_wrenches
from flexmbs.post.linearize import (
    LinearModel, ModalResult, State, elastic_indices, equilibrium, linearize, modes,
    null_space, steady_state,
)
from flexmbs.post.recovery import (
    deformed_positions, displacements, elastic_displacements, nodal_stress, von_mises_stress,
)

__all__ = ["CampbellTable", "LinearModel", "ModalResult", "State", "campbell",
           "deformed_positions", "displacements", "elastic_displacements", "elastic_indices",
           "equilibrium", "linearize", "marker_wrenches", "modes", "nodal_stress", "null_space",
           "plot_campbell", "steady_state", "von_mises_stress"]
