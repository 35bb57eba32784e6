"""A mesh of several element kinds sharing one node array (hex8 + wedge6 from a sweep,
hex20 + wedge ... where scikit-fem provides the elements).

Each kind is one :class:`~flexmbs.io.mesh.Mesh` block over the *same* ``points`` (a
block's unused nodes simply belong to no element of it), so node indices, node sets and
facet sets are those of the whole mesh.  :func:`flexmbs.fe.assemble.assemble` sums the
blocks' mass and stiffness, ``M = sum_blocks M_b``, ``K = sum_blocks K_b``, in the
mesh's own dof numbering ``3 i + k``; the reduction sums its element integrals block by
block, and the body file and XDMF output hold the blocks in one padded array
(:func:`~flexmbs.io.cell_types.joined_blocks`).  :func:`~flexmbs.io.mesh.read_mesh`
returns a mixed mesh only when asked (``mixed=True``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexmbs.errors import MeshError
from flexmbs.io.cell_types import joined_blocks


#: element kinds that may share a mesh: the first-order ones, whose faces (triangles of
#: tet4 and wedge6, quadrangles of hex8 and wedge6) match.  Quadratic kinds would need
#: the 15-node wedge or 13-node pyramid between them, which scikit-fem does not provide.
MIXABLE = ("tet4", "hex8", "wedge6")


def check_kinds(kinds, source: str = "") -> None:
    """MeshError (one line) unless every kind of a mixed mesh is in :data:`MIXABLE`."""
    bad = [k for k in kinds if k not in MIXABLE]
    if bad:
        raise MeshError(f"mesh '{source}': a mixed-element mesh of {' + '.join(kinds)} "
                        f"is not supported: {', '.join(bad)} would need a 15-node wedge "
                        f"or 13-node pyramid to connect, not provided by scikit-fem; "
                        f"expected first-order kinds {MIXABLE}")


@dataclass(frozen=True)
class MixedMesh:
    """Cell blocks (one :class:`~flexmbs.io.mesh.Mesh` per element kind) over shared
    ``points`` (N, 3) [m]; named ``node_sets`` and ``facet_sets`` of the whole mesh."""

    points: np.ndarray
    blocks: tuple
    node_sets: dict = field(default_factory=dict)
    facet_sets: dict = field(default_factory=dict)
    source: str = ""
    scale: float = 1.0

    def __post_init__(self):
        for b in self.blocks:
            if b.points.shape != self.points.shape or not np.array_equal(b.points,
                                                                         self.points):
                raise MeshError(f"mesh '{self.source}': every block of a mixed mesh must "
                                f"share its {len(self.points)} points; block "
                                f"{b.cell_type} has {len(b.points)}")
        kinds = [b.cell_type for b in self.blocks]
        check_kinds(kinds, self.source)
        if len(set(kinds)) != len(kinds):
            raise MeshError(f"mesh '{self.source}': expected one block per element kind, "
                            f"got {kinds}")

    @classmethod
    def of(cls, blocks) -> MixedMesh:
        """The mixed mesh of ``blocks`` (their points, sets, source and scale)."""
        b = blocks[0]
        return cls(b.points, tuple(blocks), dict(b.node_sets), dict(b.facet_sets),
                   b.source, b.scale)

    @property
    def cell_types(self) -> tuple[str, ...]:
        return tuple(b.cell_type for b in self.blocks)

    @property
    def material(self):
        """The material the file defines (Abaqus ``*MATERIAL``), or None."""
        return self.blocks[0].material

    @property
    def cell_type(self) -> str:
        """The kinds joined by ``+`` (``"hex8+wedge6"``), the layout of :attr:`cells`."""
        return joined_blocks([(b.cell_type, b.cells[:0]) for b in self.blocks])[0]

    @property
    def cells(self) -> np.ndarray:
        """All cells, block after block, padded with -1 (``cell_types.joined_blocks``)."""
        return joined_blocks([(b.cell_type, b.cells) for b in self.blocks])[1]

    @property
    def n_nodes(self) -> int:
        return self.points.shape[0]

    @property
    def n_cells(self) -> int:
        return sum(b.n_cells for b in self.blocks)

    def node_set(self, name: str) -> np.ndarray:
        """Node indices of the named set; MeshError listing the available names."""
        return self.blocks[0].node_set(name)

    def facet_set(self, name: str) -> np.ndarray:
        return self.blocks[0].facet_set(name)
