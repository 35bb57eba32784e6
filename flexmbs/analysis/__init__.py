"""Analyses of a model's equations that stand apart from simulation.

* :mod:`~flexmbs.analysis.integrability`: ``integrability(A, ...)``, whether velocity
  constraints ``A(y) yd = 0`` are holonomic (Frobenius, Lie brackets; THEORY §4).
"""
from flexmbs.analysis.integrability import Bracket, Integrability, integrability

__all__ = ["Bracket", "Integrability", "integrability"]
