"""The numerical rank of the pair Gram matrix ``H_p`` of the geometric stiffening (not a
test): whether a low-rank factor ``H_p = L L^T`` (n_p x r) could make ``K3 : q q q``
cost ``O(r n_q^2)`` instead of ``O(n_p^2)``, exactly to round-off.

    .venv/bin/python benchmarks/k3_rank.py                 # the scaling cantilever
    .venv/bin/python benchmarks/k3_rank.py bodies/*.h5     # and these body files

For the cantilever of ``benchmarks/scaling.py`` (hex27 20x2x2, Craig--Bampton, 16/32/64
fixed-interface modes) and each body file given: ``n_q``, ``n_p = n_q (n_q + 1) / 2``, and
the number of eigenvalues of ``H_p`` above ``tol * lambda_max`` for ``tol`` = 1e-14 (the
rule for a factor exact to round-off: the dropped part is below the round-off of
``H_p``'s own sums) and, for reference, 1e-12 ... 1e-8.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

TOLS = (1e-14, 1e-12, 1e-10, 1e-8)


def ranks(K3) -> tuple[int, list[int]]:
    """``n_p`` and the counts of eigenvalues of ``H_p`` above ``tol * lambda_max``."""
    from flexmbs.reduction.stiffening import pair_gram
    lam = np.linalg.eigvalsh(pair_gram(K3))
    return len(lam), [int((lam > t * lam[-1]).sum()) for t in TOLS]


def main(files) -> None:
    import logging

    import scaling
    from flexmbs.io.bodyfile import load_body
    logging.disable(logging.WARNING)
    print(f"{'body':<28}{'n_q':>5}{'n_p':>6}" + "".join(f"{'r(' + f'{t:g}' + ')':>10}"
                                                       for t in TOLS))
    rows = []
    for n in (16, 32, 64):
        body, _, _ = scaling._reduce(scaling._box((20, 2, 2)), n, [("x0", "rbe2")], "beam")
        rows.append(("cantilever 20x2x2", body))
    rows += [(Path(f).name, load_body(f)) for f in files]
    for name, body in rows:
        if not body.has_stiffening:
            print(f"{name:<28} no K2, K3")
            continue
        n_p, r = ranks(np.asarray(body.K3))
        print(f"{name:<28}{body.n_q:>5}{n_p:>6}" + "".join(f"{x:>10}" for x in r), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
