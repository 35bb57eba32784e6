"""Fixtures shared across the test folders."""
import pytest


@pytest.fixture
def read_xdmf():
    """``read(path, times=None) -> (time steps, frames)``: an XDMF file read with VTK's own
    reader (``vtk`` from PyPI, the ``test`` extra; the test is skipped without it).  Each
    frame (one per time of ``times``, default every step) maps a grid name to ``(points
    (N, 3), number of cells, {point field: array})``."""
    vtk = pytest.importorskip("vtk")
    from vtk.util.numpy_support import vtk_to_numpy

    def read(path, times=None):
        r = vtk.vtkXdmfReader()
        r.SetFileName(str(path))
        r.UpdateInformation()
        info = r.GetOutputInformation(0)
        steps = list(info.Get(vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS()))
        frames = []
        for t in steps if times is None else times:
            info.Set(vtk.vtkStreamingDemandDrivenPipeline.UPDATE_TIME_STEP(), t)
            r.Update()
            out = r.GetOutputDataObject(0)
            frame = {}
            for b in range(out.GetNumberOfBlocks()):
                ds = out.GetBlock(b)
                name = out.GetMetaData(b).Get(vtk.vtkCompositeDataSet.NAME()).split("[")[0]
                pd = ds.GetPointData()
                frame[name] = (vtk_to_numpy(ds.GetPoints().GetData()).copy(),
                               ds.GetNumberOfCells(),
                               {pd.GetArrayName(j): vtk_to_numpy(pd.GetArray(j)).copy()
                                for j in range(pd.GetNumberOfArrays())})
            frames.append(frame)
        return steps, frames
    return read
