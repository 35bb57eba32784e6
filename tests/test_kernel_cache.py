"""The cold start of an installation: which kernel modules numba's cache lacks, and the
two lines the first import writes (flexmbs.kernel_cache).  Reference: the files on disk
(numba's cache index ``<module>.<function>-<line>.py<ver>.nbi`` of each kernel module)."""
import io
import subprocess
import sys

import flexmbs  # noqa: F401  (this process has loaded, hence cached, every kernel)
from flexmbs import kernel_cache


def test_every_kernel_module_is_listed():
    found = sorted(p.name for p in kernel_cache.PACKAGE.rglob("*_kernel.py"))
    assert sorted(p.name for p in kernel_cache.kernel_modules()) == found
    assert "step_kernel.py" in found and "ffrf_kernel.py" in found


def test_an_empty_cache_lacks_every_module(tmp_path):
    cold = kernel_cache.cold_kernel_modules(str(tmp_path))
    assert len(cold) == len(kernel_cache.kernel_modules())
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "step_kernel.affine_residual-47.py311.nbi").write_bytes(b"")
    assert "integrate/step_kernel.py" not in kernel_cache.cold_kernel_modules(str(tmp_path))


def test_this_installation_is_warm():
    assert kernel_cache.cold_kernel_modules() == []


def test_a_warm_import_is_silent():
    out = subprocess.run([sys.executable, "-c", "import flexmbs"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and out.stderr == ""


def test_a_cold_start_says_so_before_and_after(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    stream = io.StringIO()
    with kernel_cache.ColdStart(stream) as cs:
        assert stream.getvalue().startswith("flexmbs: compiling the numerical kernels")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and lines[1] == f"flexmbs: kernels compiled in {cs.seconds:.0f} s"
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    quiet = io.StringIO()
    with kernel_cache.ColdStart(quiet):
        pass
    assert quiet.getvalue() == ""
