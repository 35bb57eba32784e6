"""Where a case's files go when the case does not say: never next to the case file.

Inputs (meshes) are found relative to the case file; outputs go where ``flexmbs`` runs,
as an FE solver's job files do, so that running a shipped or shared case never writes
into its folder:

- results: ``[output] directory`` of the case (relative to the case file), else
  ``results/`` in the working directory (``--out`` wins over both);
- reduced bodies: a cache shared by all cases, keyed by the content of the mesh and the
  settings (:mod:`flexmbs.case.cache`), in ``$FLEXMBS_BODY_CACHE``, else
  ``$XDG_CACHE_HOME/flexmbs/bodies``, else ``~/.cache/flexmbs/bodies`` (``--body-dir``
  wins).
"""
from __future__ import annotations

import os
from pathlib import Path

#: the results folder in the working directory when the case names none
RESULTS = "results"


def output_folder(case_file: str | os.PathLike, directory: str | None) -> Path:
    """The results folder of a case: its ``[output] directory`` relative to the case file,
    or :data:`RESULTS` in the working directory."""
    if directory:
        return Path(case_file).parent / directory
    return Path(RESULTS)


def body_cache() -> Path:
    """The default cache folder of reduced-body files (module docstring)."""
    explicit = os.environ.get("FLEXMBS_BODY_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "flexmbs" / "bodies"


def body_cache_label(body_dir) -> str:
    """How a message names the body cache ``body_dir``: the environment variable or the
    default it came from, else ``--body-dir``."""
    if os.environ.get("FLEXMBS_BODY_CACHE") and Path(body_dir) == body_cache():
        return "FLEXMBS_BODY_CACHE"
    return "the body cache" if Path(body_dir) == body_cache() else "--body-dir"
