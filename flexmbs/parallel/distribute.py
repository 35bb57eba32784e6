"""Run independent tasks on the ranks of an MPI communicator.

Static round-robin: task ``i`` runs on rank ``i % size``, in increasing ``i``.  Every rank
works (no idle master) and the assignment is reproducible: the same command on the same
number of ranks runs the same variant on the same rank, which makes logs easy to find.
It balances well when the tasks take similar times (a parameter sweep of one model);
with very uneven tasks, order them so the long ones are spread over the ranks.

``comm`` is an mpi4py communicator or ``None`` (serial).  Only ``map_tasks`` talks MPI.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence


def rank_size(comm) -> tuple[int, int]:
    return (0, 1) if comm is None else (comm.Get_rank(), comm.Get_size())


def idle_barrier(comm, poll: float = 0.02) -> None:
    """A barrier that sleeps while it waits: MPI's blocking barrier spins, which steals the
    core of a rank still working when ranks share cores (oversubscribed runs)."""
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(poll)


def on_root(comm, func: Callable, *args):
    """``func(*args)`` on rank 0, collectively: every rank returns its value, or every rank
    raises the exception it raised there (broadcast).  A root-only step (a folder made,
    a table written) that fails, e.g. on a full disk, then ends every rank with the same
    message instead of leaving the others waiting in the next collective call."""
    rank, size = rank_size(comm)
    if size == 1:
        return func(*args)
    outcome = None
    if rank == 0:
        try:
            outcome = ("ok", func(*args))
        except Exception as exc:        # noqa: BLE001 - handed to every rank
            outcome = ("error", exc)
    idle_barrier(comm)                  # the others sleep while rank 0 works
    outcome = comm.bcast(outcome, root=0)
    if outcome[0] == "error":
        outcome[1].collective = True    # every rank raises it: no MPI_Abort needed
        raise outcome[1]
    return outcome[1]


def my_tasks(n: int, rank: int, size: int) -> list[int]:
    """Indices of the tasks of ``rank``: ``rank, rank + size, ...``."""
    return list(range(rank, n, size))


def map_tasks(func: Callable, tasks: Sequence, comm=None, *, stop: Callable[[], bool]
              | None = None) -> list | None:
    """``[func(t) for t in tasks]`` spread over the ranks; the list (in task order) on
    every rank.  ``func`` should not raise (it records failures in its return value);
    when ``stop()`` turns true the rank skips its remaining tasks (their entry is None)."""
    rank, size = rank_size(comm)
    mine = {}
    for i in my_tasks(len(tasks), rank, size):
        if stop is not None and stop():
            break
        mine[i] = func(tasks[i])
    if comm is None or size == 1:
        parts = [mine]
    else:
        idle_barrier(comm)
        parts = comm.allgather(mine)
    merged = {}
    for p in parts:
        merged.update(p)
    return [merged.get(i) for i in range(len(tasks))]
