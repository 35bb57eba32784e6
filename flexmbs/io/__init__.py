"""flexmbs.io: mesh input (meshio) and result files."""
from flexmbs.io.mesh import Mesh, read_mesh

__all__ = ["Mesh", "read_mesh"]
