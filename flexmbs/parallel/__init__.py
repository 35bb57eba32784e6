"""Parallel batch runs: parameter sweeps of a case over MPI ranks.

    variants = expand([("drives[0].omega", (100, 150, 200))], "slider_crank")
    raw = variant_case(read_raw("case.toml"), Path("case.toml"), variants[0])

* :mod:`.keypath`     key paths into a case (``drives[0].omega``) and setting them
* :mod:`.variants`    ``--vary`` parsing, ``[sweep]`` table, Cartesian product, names
* :mod:`.outputs`     scalar outputs of a result file (``max_abs(sensors/*)``)
* :mod:`.distribute`  static round-robin over the ranks (mpi4py, or serial)
* :mod:`.table`       the summary table (CSV and text)
* :mod:`.toml_writer` the case file of each variant
* :mod:`.variant_run` one variant: its case, its run, its row of the table
* :mod:`.sweep`       the sweep: variants over the ranks, the summary table

:func:`~flexmbs.parallel.sweep.sweep` runs each variant through the case service
(:func:`flexmbs.case.run`, the code path of ``flexmbs run``); the command ``flexmbs
sweep`` (:mod:`flexmbs.cli.sweep`) parses its arguments and prints the table.
"""
from flexmbs.case.loader import read_raw
from flexmbs.parallel.distribute import map_tasks, my_tasks
from flexmbs.parallel.keypath import check_key_paths, parse_key_path, with_values
from flexmbs.parallel.outputs import DEFAULT_OUTPUTS, evaluate, parse_output
from flexmbs.parallel.variants import (Variant, case_digest, case_name, expand, parse_value,
                                       parse_vary, sweep_table, variant_case)

__all__ = ["DEFAULT_OUTPUTS", "Variant", "case_digest", "case_name", "check_key_paths",
           "evaluate", "expand", "map_tasks", "my_tasks", "parse_key_path", "parse_output",
           "parse_value", "parse_vary", "read_raw", "sweep_table", "variant_case",
           "with_values"]
