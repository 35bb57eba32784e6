"""flexmbs.system: bodies + joints + forces -> one DAE on flat arrays.

* :mod:`.model` -- the user's :class:`~.model.System` (named bodies, joints, forces);
* :mod:`.assembly` -- :class:`~.assembly.AssembledSystem`, the DAE front, composed of
  :mod:`.layout` (offsets, blocks, active rows), :mod:`.constraint_rows` (how rows are
  evaluated, memos), :mod:`.constraint_hessian`, :mod:`.force_terms`, :mod:`.tangent`
  (tangent and Newton matrices), :mod:`.sparse` and :mod:`.outputs` (marker kinematics,
  reactions, energy);
* :mod:`.stacked` / :mod:`.stacked_kernel` -- all label rows of a small system in one
  compiled pass; :mod:`.local_rows` / :mod:`.local_rows_kernel` -- the same, and the
  constraint Hessian sums, for a system of any size, sparse in ``q``;
  :mod:`.affine_plan` -- what a compiled step of the system needs;
* :mod:`.dof`, :mod:`.health` -- redundant rows, mobility, inconsistent initial states.

Only numpy, scipy and the compiled kernels here (no PETSc, nothing from
``flexmbs.integrate``).
"""
