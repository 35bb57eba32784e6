"""CPU seconds of the compile of every kernel, one process, empty scratch cache (not a test).

    PYTHONPATH=<tree> .venv/bin/python benchmarks/compile_cost.py <tree> LABEL
        [error_model=numpy] [loop_vectorize=0] [opt=2] [no_cfunc_wrapper=1]
        [entry_opt=LEVEL:module:name,module:name]

Each entry point of ``kernel_cache.entry_points()`` of ``<tree>`` (its kernel modules
imported bare, ``kernel_cache.import_bare``) is compiled after the other into a new empty
``NUMBA_CACHE_DIR``, with ``time.process_time`` around each (the machine may be shared:
CPU time, not wall time).  One JSON line: the total CPU (numba's own start included), the
CPU per entry point, the kernels compiled for more than one type signature, and the
scratch cache (which ``NUMBA_CACHE_DIR=<it>`` then lets a run load, e.g. to measure the
step of code compiled with these options).  The options, for an experiment on numba's
knobs (``docs/performance.md``, "Cold start"): ``error_model``, ``no_cfunc_wrapper`` on
every kernel (numba's ``njit``/``cfunc`` wrapped before the modules are imported),
``loop_vectorize`` and ``opt`` (``numba.config`` before compiling), ``entry_opt`` the
optimisation level while the listed entry points compile (the others at ``opt``).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import types


def main(argv=None) -> int:
    tree, label, *options = sys.argv[1:] if argv is None else argv
    opts = dict(o.split("=", 1) for o in options)
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="compile_cost_")
    t_start = time.process_time()
    import numba
    from numba.core import config

    extra = {}
    if "error_model" in opts:
        extra["error_model"] = opts["error_model"]
    njit0, cfunc0 = numba.njit, numba.cfunc

    def njit(*args, **kw):
        kw = {**extra, **kw}
        if opts.get("no_cfunc_wrapper") == "1":
            kw.setdefault("no_cfunc_wrapper", True)
        return njit0(**kw)(args[0]) if args and callable(args[0]) else njit0(*args, **kw)

    def cfunc(sig, **kw):
        return cfunc0(sig, **{**extra, **kw})
    numba.njit, numba.cfunc = njit, cfunc
    if "loop_vectorize" in opts:
        config.LOOP_VECTORIZE = int(opts["loop_vectorize"])
    level = type(config.OPT)
    if "opt" in opts:
        config.OPT = level(int(opts["opt"]))
    base_opt, entry_opt, listed = config.OPT, None, set()
    if "entry_opt" in opts:
        lvl, names = opts["entry_opt"].split(":", 1)
        entry_opt, listed = level(int(lvl)), set(names.split(","))

    sys.path.insert(0, tree)
    sys.modules["flexmbs"] = package = types.ModuleType("flexmbs")
    package.__path__ = [os.path.join(tree, "flexmbs")]
    from flexmbs import kernel_cache as kc
    per_entry = {}
    for entry in kc.entry_points(kc.import_bare):
        config.OPT = entry_opt if entry in listed else base_opt
        t0 = time.process_time()
        kc.compile_entries([entry], kc.import_bare)
        per_entry[entry] = round(time.process_time() - t0, 2)
    config.OPT = base_opt
    from numba.core.registry import CPUDispatcher
    several = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("flexmbs."):
            for key, value in vars(module).items():
                if isinstance(value, CPUDispatcher) and len(value.signatures) > 1:
                    several[value.py_func.__module__ + "." + value.__name__] = [
                        str(s) for s in value.signatures]
    print(json.dumps({"label": label, "options": opts,
                      "total_cpu_s": round(time.process_time() - t_start, 1),
                      "entries": per_entry, "several_signatures": several,
                      "cache": os.environ["NUMBA_CACHE_DIR"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
