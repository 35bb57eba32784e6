# flexmbs build and run targets.  Every target installs what it needs first.
# PETSc/SLEPc/MPI come from Debian (PyPI has no petsc4py wheels; Debian's build has MUMPS).
SHELL := /bin/bash
VENV  ?= .venv
PY    := $(VENV)/bin/python
SUDO  := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := python3-petsc4py python3-slepc4py python3-mpi4py python3-venv \
                python3-dev openmpi-bin libopenblas0-pthread \
                libglu1-mesa libxcursor1 libxft2 libxinerama1
PETSC_PY := /usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real/lib/python3/dist-packages
SLEPC_PY := /usr/lib/slepcdir/slepc3.18/x86_64-linux-gnu-real/lib/python3/dist-packages
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
OUT ?= out

.PHONY: deps venv demo test test-serial test-mpi bench clean

deps: .deps.stamp
.deps.stamp:
	$(SUDO) apt-get install -y --no-install-recommends $(APT_PACKAGES)
	touch $@

venv: $(VENV)/.stamp
$(VENV)/.stamp: pyproject.toml .deps.stamp
	/usr/bin/python3 -m venv --system-site-packages $(VENV)
	echo "$(PETSC_PY)" >  $$($(VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/debian-petsc.pth
	echo "$(SLEPC_PY)" >> $$($(VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/debian-petsc.pth
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -c "import petsc4py, slepc4py, mpi4py, numpy, skfem, meshio, h5py; \
	          from petsc4py import PETSc; print('flexmbs env: PETSc', PETSc.Sys.getVersion(), 'numpy', numpy.__version__)"
	# compile the numerical kernels now (once; the first import says so and how long)
	$(PY) -c "import flexmbs"
	touch $@

# The main job: the shipped flexible-linkage case, mesh -> body -> simulation -> results and plots.
demo: venv
	$(VENV)/bin/flexmbs run cases/main/case.toml --out $(OUT)

# The whole test suite: serial tests, then the MPI tests under mpiexec -n 2.
test: venv test-serial test-mpi
test-serial: venv
	$(PY) -m pytest -q --color=no -m "not mpi" tests
test-mpi: venv
	mpiexec -n 2 --oversubscribe $(PY) -m pytest -q --color=no -m mpi -p no:cacheprovider tests

bench: venv
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) .deps.stamp $(OUT)
