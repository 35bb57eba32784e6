"""flexmbs: flexible-body finite-element multibody solver (SI units throughout).

``import flexmbs as fm`` gives the modelling API: bodies, joints, drives, force
elements, sensors, ``System`` and ``simulate``; see ``docs/`` for the theory-to-code map.
The first import after an installation compiles the numerical kernels and says so
(:mod:`flexmbs.kernel_cache`); so does a kernel compiled later, at its first use
(:class:`flexmbs.compiled.FirstCompile`).
"""
from flexmbs._version import __version__ as __version__
from flexmbs.kernel_cache import ColdStart as _ColdStart

try:
    with _ColdStart():
        from flexmbs.api import *  # noqa: F403
        from flexmbs.api import __all__  # noqa: F401
except KeyboardInterrupt:
    # the flexmbs command ends with one line and status 130 (a library caller gets the
    # KeyboardInterrupt as always)
    from flexmbs.kernel_cache import command_is_main as _command_is_main
    if _command_is_main():
        from flexmbs.kernel_cache import end_interrupted_import as _end
        _end()
    raise

from flexmbs.compiled import FIRST_COMPILE as _FIRST_COMPILE

_FIRST_COMPILE.install()
