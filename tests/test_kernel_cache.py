"""The cold start of an installation: which kernel modules numba's cache lacks, the two
lines the first import writes, the split of the compile over two processes and the line
of a kernel compiled at its first use (flexmbs.kernel_cache).  Reference: the files on disk
(numba's cache index ``<module>.<function>-<line>.py<ver>.nbi`` of each kernel module) and
the kernel modules' own attributes."""
import io
import subprocess
import sys

import pytest
from numba import njit

import flexmbs  # noqa: F401  (this process has loaded, hence cached, every kernel)
from flexmbs import kernel_cache
from flexmbs.compiled import FirstCompile, NativeFunction


def test_every_kernel_module_is_listed():
    found = sorted(p.name for p in kernel_cache.PACKAGE.rglob("*_kernel.py"))
    assert sorted(p.name for p in kernel_cache.kernel_modules()) == found
    assert "step_kernel.py" in found and "ffrf_kernel.py" in found


def test_an_empty_cache_lacks_every_module(tmp_path):
    cold = kernel_cache.cold_kernel_modules(str(tmp_path))
    assert len(cold) == len(kernel_cache.core_modules())
    every = kernel_cache.cold_kernel_modules(str(tmp_path), features=True)
    assert len(every) == len(kernel_cache.kernel_modules())
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "step_kernel.affine_residual-47.py311.nbi").write_bytes(b"")
    assert "integrate/step_kernel.py" not in kernel_cache.cold_kernel_modules(str(tmp_path))


def test_a_feature_module_not_compiled_is_not_a_cold_start(tmp_path):
    """An index file for each core module and none for the feature modules: no cold
    start; with ``features``, the feature modules (by the files on disk) are reported."""
    for src in kernel_cache.core_modules():
        (tmp_path / f"{src.stem}.f-1.py311.nbi").write_bytes(b"")
    assert kernel_cache.cold_kernel_modules(str(tmp_path)) == []
    every = kernel_cache.cold_kernel_modules(str(tmp_path), features=True)
    assert sorted(every) == sorted(str(p.relative_to(kernel_cache.PACKAGE))
                                   for p in kernel_cache.feature_modules())
    assert "forces/spring_local_kernel.py" in every and "system/local_rows_kernel.py" in every


def test_the_features_are_entry_points_of_their_modules():
    """Each :data:`FEATURES` key names a ``warm`` or callback of a kernel module (its
    attributes), its module is a feature module, and the core has none of them."""
    entries = kernel_cache.entry_points()
    core = kernel_cache.entry_points(features=False)
    assert set(kernel_cache.FEATURES) <= set(entries)
    assert sorted(core) == sorted(set(entries) - set(kernel_cache.FEATURES))
    for entry in kernel_cache.FEATURES:
        module = entry.split(":")[0]
        assert not [e for e in core if e.split(":")[0] == module]     # all its entries
        assert module in {kernel_cache.module_name(s) for s in kernel_cache.feature_modules()}
    assert "flexmbs.integrate.step_kernel:newton_dense_c" in core


def test_this_installation_is_warm():
    assert kernel_cache.cold_kernel_modules() == []


def test_a_warm_import_is_silent():
    out = subprocess.run([sys.executable, "-c", "import flexmbs"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and out.stderr == ""


def test_a_cold_start_says_so_before_and_after(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    stream = io.StringIO()
    with kernel_cache.ColdStart(stream, processes=1) as cs:
        assert stream.getvalue().startswith("flexmbs: compiling the numerical kernels")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and lines[1] == f"flexmbs: kernels compiled in {cs.seconds:.0f} s"
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    quiet = io.StringIO()
    with kernel_cache.ColdStart(quiet):
        pass
    assert quiet.getvalue() == ""


def test_the_two_processes_share_every_core_entry_point_once():
    entries = kernel_cache.entry_points(features=False)
    callbacks = [f"{m.__name__}:{k}" for m in map(kernel_cache.import_bare, (
        kernel_cache.module_name(s) for s in kernel_cache.kernel_modules()))
        for k, v in vars(m).items() if isinstance(v, NativeFunction)]
    core = set(callbacks) - set(kernel_cache.FEATURES)   # (the step's forces: features)
    assert len(core) >= 4 and core <= set(entries)
    # the callbacks that are features are exactly the step's four force callbacks
    assert set(callbacks) & set(kernel_cache.FEATURES) == {
        f"flexmbs.integrate.step_forces_kernel:{k}" for k in (
            "friction_residual_c", "spring_residual_c", "friction_newton_c",
            "spring_newton_c")}
    assert "flexmbs.integrate.genalpha_kernel:warm" in entries
    first, second = kernel_cache.partition(entries, 2)
    assert sorted(first + second) == sorted(entries) and not set(first) & set(second)
    assert first and second
    for group in kernel_cache.TOGETHER:          # a shared chain stays in one process
        assert set(group) <= set(first) or set(group) <= set(second)
    assert sorted(kernel_cache.partition(entries, 1)[0]) == sorted(entries)


def test_a_cold_start_compiles_the_core_only(tmp_path, monkeypatch):
    """What the two processes of a cold start are given to compile (recorded instead of
    compiled): every core entry point once, no feature."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    given = []

    class Worker:
        def wait(self):
            return 0

    def start_worker(entries):
        given.append(list(entries))
        return Worker()

    monkeypatch.setattr(kernel_cache, "start_worker", start_worker)
    monkeypatch.setattr(kernel_cache, "compile_entries", lambda e, *a: given.append(list(e)))
    with kernel_cache.ColdStart(io.StringIO(), processes=2):
        pass
    first, second, after = given                  # own share, worker's share, the load
    core = kernel_cache.entry_points(features=False)
    assert sorted(first + second) == sorted(core) and sorted(after) == sorted(core)
    assert not set(first + second) & set(kernel_cache.FEATURES)


def test_a_feature_kernel_says_so_at_its_first_use(tmp_path):
    """A feature module's kernel, called in a fresh process with an empty cache: one
    line naming it before its compile, its time after, and its machine code cached."""
    code = ("import sys, types; sys.modules['flexmbs'] = p = types.ModuleType('flexmbs'); "
            f"p.__path__ = [{str(kernel_cache.PACKAGE)!r}]; "
            "from flexmbs import kernel_cache as k; from flexmbs.compiled import FirstCompile; "
            "m = k.import_bare('flexmbs.forces.spring_local_kernel'); "
            "FirstCompile().install(); m.warm()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, env={**__import__("os").environ,
                                           "NUMBA_CACHE_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 2, lines                 # spring_local_residual, spring_local_newton
    for line, name in zip(lines, ("spring_local_residual", "spring_local_newton")):
        assert line.startswith(f"flexmbs: compiling the kernel flexmbs.forces."
                               f"spring_local_kernel.{name} at its first use")
        assert line.endswith(" s")
    assert kernel_cache.cold_kernel_modules(str(tmp_path), features=True).count(
        "forces/spring_local_kernel.py") == 0


@pytest.mark.parametrize("callback", ["spring_residual_c", "friction_newton_c"])
def test_the_steps_forces_compile_at_their_first_use(tmp_path, callback):
    """The compiled step's springs and joint friction (round 14): a C function of theirs,
    compiled in a fresh process with an empty cache, says so in one line (before the
    compile, its time after); the step's force modules and the force kernels they call
    are feature modules, not in the core that the first import compiles."""
    code = ("import sys, types; sys.modules['flexmbs'] = p = types.ModuleType('flexmbs'); "
            f"p.__path__ = [{str(kernel_cache.PACKAGE)!r}]; "
            "from flexmbs import kernel_cache as k; from flexmbs.compiled import FIRST_COMPILE; "
            "m = k.import_bare('flexmbs.integrate.step_forces_kernel'); "
            f"FIRST_COMPILE.install(); m.{callback}.compile()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, env={**__import__("os").environ,
                                           "NUMBA_CACHE_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("flexmbs: compiling the kernel flexmbs.integrate."
                               f"step_forces_kernel.{callback} at its first use")
    assert lines[0].endswith(" s")
    core = {str(p.relative_to(kernel_cache.PACKAGE)) for p in kernel_cache.core_modules()}
    for name in ("integrate/step_forces_kernel.py", "forces/spring_kernel.py",
                 "forces/friction_kernel.py"):
        assert name not in core
    assert "integrate/step_kernel.py" in core


def test_the_partition_balances_the_measured_costs(monkeypatch):
    """Costs 5, 4, 3, 3 on two processes: the best split (by enumeration of the 2^4
    assignments) has the longest share 8, {5, 3} and {4, 3}; a group of two entries
    (``TOGETHER``) goes as one."""
    cost = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 3.0}
    shares = kernel_cache.partition(list(cost), 2, cost)
    names = list(cost)
    best = min(max(sum(cost[k] for i, k in enumerate(names) if m >> i & 1),
                   sum(cost[k] for i, k in enumerate(names) if not m >> i & 1))
               for m in range(16))
    assert max(sum(cost[e] for e in s) for s in shares) == best == 8.0
    assert sorted(map(sorted, shares)) == [["a", "c"], ["b", "d"]] or \
        sorted(map(sorted, shares)) == [["a", "d"], ["b", "c"]]
    group = ("g1", "g2")
    monkeypatch.setattr(kernel_cache, "TOGETHER", (group,))
    together = {group[0]: 4.0, group[1]: 4.0, "x": 7.0, "y": 2.0}
    one, two = kernel_cache.partition(list(together), 2, together)
    assert set(group) <= set(one) and list(group) == [e for e in one if e in group]
    assert two == ["x", "y"]


def test_importing_the_kernel_modules_compiles_nothing(tmp_path):
    """Imported bare in a fresh process with an empty cache: no machine code written."""
    code = ("import sys, types; sys.modules['flexmbs'] = p = types.ModuleType('flexmbs'); "
            f"p.__path__ = [{str(kernel_cache.PACKAGE)!r}]; "
            "from flexmbs import kernel_cache as k; print(len(k.entry_points(k.import_bare)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env={**__import__("os").environ,
                                           "NUMBA_CACHE_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(kernel_cache.entry_points())
    assert not list(tmp_path.rglob("*.nbi"))


def test_the_second_process_writes_the_cache_of_its_share(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    worker = kernel_cache.start_worker(["flexmbs.integrate.genalpha_kernel:warm"])
    assert worker.wait(timeout=300) == 0
    written = sorted(p.name.split("-")[0] for p in tmp_path.rglob("*.nbi"))
    assert written == ["genalpha_kernel.predict", "genalpha_kernel.update"]


def test_a_kernel_compiled_at_first_use_says_so_in_one_line():
    stream = io.StringIO()
    first = FirstCompile(stream).install()
    try:
        twice = njit(lambda x: 2.0 * x)
        twice.__module__ = twice.py_func.__module__ = "flexmbs.test_only"
        assert twice(1.5) == 3.0 and twice(2.5) == 5.0       # one compile, one line
        outside = njit(lambda x: x + 1.0)
        assert outside(1.0) == 2.0                           # not a kernel of flexmbs
    finally:
        first.remove()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("flexmbs: compiling the kernel flexmbs.test_only.<lambda> at")
    assert lines[0].endswith(" s")


def test_a_c_callback_compiled_in_a_run_says_so(tmp_path):
    """A C callback whose cached code is missing (numba fires no compile event for a
    cfunc): one line naming it when it compiles in a run, none when it loads."""
    code = ("import sys, types; sys.modules['flexmbs'] = p = types.ModuleType('flexmbs'); "
            f"p.__path__ = [{str(kernel_cache.PACKAGE)!r}]; "
            "from flexmbs import kernel_cache as k; from flexmbs.compiled import FIRST_COMPILE; "
            "m = k.import_bare('flexmbs.integrate.increments_kernel'); "
            "FIRST_COMPILE.install(); m.increment_test_c.compile()")
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=600, env=env) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    first = runs[0].stderr.splitlines()
    assert len(first) == 1, first
    assert first[0].startswith("flexmbs: compil") and first[0].endswith(" s")
    assert "flexmbs.integrate.increments_kernel.increment_test_c" in first[0]
    assert runs[1].stderr == ""
