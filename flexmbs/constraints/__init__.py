"""Joints as algebraic constraints g(q, t) = 0 (THEORY §5.5), one small file per joint."""
