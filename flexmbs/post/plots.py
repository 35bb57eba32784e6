"""PNG plots of a result file: sensors, joint coordinates, joint reactions, internal
states of force elements (pressures, controller states), recorded signals of force
elements (cylinder stroke and force, tracking error, valve opening, actuation), contacts
(gap, its rate, normal force), hot spots (largest von Mises and principal stresses over
their nodes), each flexible body's peak von Mises stress over time, energy.

:func:`plot_results` reads a result file (``flexmbs.io.results`` layout) and writes one
PNG per sensor and per joint (coordinates and reactions), plus the energy, with
matplotlib's Agg backend (no display needed).  Column labels and units come from the
datasets' ``columns`` and ``unit`` attributes.  Each PNG is written under a temporary
name and renamed when complete; a file that cannot be written raises
:class:`~flexmbs.errors.OutputError` naming it.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np

from flexmbs.errors import OutputError


def _series(path: Path) -> tuple[np.ndarray, list[tuple[str, str, np.ndarray, list, str]]]:
    """``(t, [(group, name, values (n, k), columns, unit)])`` from a result file."""
    from flexmbs.io.results import committed_rows, open_result
    out = []
    with open_result(path) as f:
        n = committed_rows(f)
        t = np.array(f["time"][:n]) if "time" in f else np.zeros(0)
        for name, ds in (f["sensors"].items() if "sensors" in f else []):
            out.append(("sensor", name, np.array(ds[:n]), _columns(ds),
                        str(ds.attrs.get("unit", ""))))
        for name, grp in (f["joints"].items() if "joints" in f else []):
            for key in ("coordinates", "reaction"):
                if key in grp and grp[key].shape[-1] > 0:
                    ds = grp[key]
                    out.append((f"joint_{key}", name, np.array(ds[:n]), _columns(ds),
                                str(ds.attrs.get("unit", ""))))
        for group in ("states", "outputs"):
            for name, grp in (f[group].items() if group in f else []):
                for key, ds in grp.items():
                    if group == "states" and key != "z":
                        continue
                    out.append((group, name if group == "states" else f"{name}/{key}",
                                np.array(ds[:n]), _columns(ds),
                                str(ds.attrs.get("unit", ""))))
        for name, grp in (f["stress"].items() if "stress" in f else []):
            if "von_mises_peak" in grp:
                out.append(("stress", name, np.array(grp["von_mises_peak"][:n]),
                            ["von Mises peak"], "Pa"))
        for name, ds in (f["contacts"].items() if "contacts" in f else []):
            out.append(("contact", name, np.array(ds[:n]), _columns(ds),
                        str(ds.attrs.get("unit", ""))))
        for name, grp in (f["hotspots"].items() if "hotspots" in f else []):
            if "von_mises" in grp and "principal" in grp:
                vm, pr = np.array(grp["von_mises"][:n]), np.array(grp["principal"][:n])
                out.append(("hotspot", name, np.column_stack(
                    [vm.max(axis=1), pr[..., 0].max(axis=1), pr[..., -1].min(axis=1)]),
                    ["max von Mises", "max sigma_1", "min sigma_3"], "Pa"))
        if "energy" in f:
            kinds = sorted(f["energy"])
            vals = np.column_stack([np.array(f["energy"][k][:n]) for k in kinds]) \
                if kinds else None
            if vals is not None:
                out.append(("energy", "energy", vals, kinds, "J"))
    return t, out


def _columns(ds) -> list[str]:
    cols = ds.attrs.get("columns")
    n = ds.shape[1] if ds.ndim > 1 else 1
    if cols is None or len(cols) != n:
        return [str(i) for i in range(n)]
    return [c.decode() if isinstance(c, bytes) else str(c) for c in cols]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def plot_results(result_path: str | Path, out_dir: str | Path) -> list[Path]:
    """Write the PNG plots of ``result_path`` into ``out_dir``; returns their paths."""
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    result_path, out_dir = Path(result_path), Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError.from_exception(exc, exc.filename or out_dir) from None
    t, series = _series(result_path)
    written = []
    for group, name, vals, cols, unit in series:
        vals = vals.reshape(len(vals), -1)
        if len(t) == 0 or len(vals) != len(t):
            continue
        if group == "joint_reaction":
            fig, axes = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
            units = ["N", "N m"]
            for ax, idx, u in zip(axes, (slice(0, 3), slice(3, 6)), units):
                for c, col in zip(vals[:, idx].T, cols[idx]):
                    ax.plot(t, c, label=col)
                ax.set_ylabel(f"[{u}]")
                ax.legend(loc="best", fontsize=8)
                ax.grid(True, alpha=0.3)
            axes[0].set_title(f"joint '{name}': reaction on the second body (joint frame)")
            axes[-1].set_xlabel("time [s]")
        else:
            title = {"sensor": f"sensor '{name}'", "joint_coordinates": f"joint '{name}': "
                     "coordinates", "energy": "energy",
                     "states": f"force element '{name}': internal states",
                     "stress": f"body '{name}': largest von Mises stress over the nodes",
                     "outputs": "force element '{}': {}".format(*name.partition("/")[::2]),
                     "contact": f"contact '{name}': gap, its rate, normal force",
                     "hotspot": f"hot spot '{name}': stress over its nodes"}[group]
            # sensors: one axis per component, so a millimetre deflection is not flattened
            # by a 0.4 m offset of another component on a shared scale
            n_ax = vals.shape[1] if group in ("sensor", "states", "outputs", "contact") and \
                1 < vals.shape[1] <= 6 else 1
            fig, axes = plt.subplots(n_ax, 1, figsize=(7, 2.2 + 1.5 * n_ax), sharex=True,
                                     squeeze=False)
            axes = axes[:, 0]
            for k, (c, col) in enumerate(zip(vals.T, cols)):
                ax = axes[k if n_ax > 1 else 0]
                ax.plot(t, c, label=col)
            per_axis = unit.split(", ")            # one unit per column, or one for all
            for k, ax in enumerate(axes):
                u = per_axis[k] if len(per_axis) == len(axes) > 1 else unit
                ax.set_ylabel(f"[{u}]" if u else "")
                ax.legend(loc="best", fontsize=8)
                ax.grid(True, alpha=0.3)
            axes[0].set_title(title)
            axes[-1].set_xlabel("time [s]")
        fig.tight_layout()
        prefix = {"sensor": "sensor", "joint_coordinates": "joint", "joint_reaction": "reaction",
                  "energy": "", "states": "states", "outputs": "element",
                  "stress": "stress", "contact": "contact", "hotspot": "hotspot"}[group]
        fname = out_dir / (f"{prefix}_{_safe(name)}.png" if prefix else "energy.png")
        try:
            _save(fig, fname)
        finally:
            plt.close(fig)
        written.append(fname)
    return written


def _save(fig, fname: Path) -> None:
    """``fig`` as PNG ``fname``, written under a temporary name and renamed when complete."""
    tmp = fname.with_name(f".{fname.name}.partial")
    try:
        fig.savefig(tmp, dpi=100, format="png")
        os.replace(tmp, fname)
    except OSError as exc:
        raise OutputError.from_exception(exc, fname) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
