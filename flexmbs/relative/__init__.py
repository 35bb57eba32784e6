"""Relative (joint) coordinates of trees with cut joints (THEORY §3, docs/relative.md):
joint kinematics (``joints``), the tree (``tree``), the forward sweep with ``B``, ``C``
(``kinematics``), the non-recursive and recursive formalisms (``nonrecursive``,
``recursive``), reactions (``reactions``), the minimal-form DAE (``dae``) and its
generalized-alpha run (``run``)."""
