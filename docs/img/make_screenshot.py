"""Render the main case's XDMF of the whole mechanism offscreen with VTK into
docs/img/main_case.png (the picture in docs/tutorial.md).

    flexmbs run cases/main/case.toml --out out/main
    python docs/img/make_screenshot.py out/main/flexible_slider_crank_mechanism.xdmf

Needs ``vtk`` from PyPI (the ``test`` extra); its wheels render offscreen without a
display.  The frame shown is the output step at ``--time`` (default 0.0285 s, crank at
about 245 degrees), the rod coloured by ``von_mises_max`` [Pa] (maximum over the run).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import vtk


def render(xdmf: Path, png: Path, time: float, size=(1200, 560)) -> None:
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(str(xdmf))
    reader.UpdateInformation()
    info = reader.GetOutputInformation(0)
    steps = info.Get(vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS())
    t = min(steps, key=lambda s: abs(s - time))
    info.Set(vtk.vtkStreamingDemandDrivenPipeline.UPDATE_TIME_STEP(), t)
    reader.Update()
    data = reader.GetOutputDataObject(0)
    ren = vtk.vtkRenderer()
    ren.SetBackground(1.0, 1.0, 1.0)
    colours = {"crank": (0.35, 0.45, 0.75), "slider": (0.2, 0.6, 0.3),
               "joints": (0.85, 0.1, 0.1)}
    for b in range(data.GetNumberOfBlocks()):
        name = data.GetMetaData(b).Get(vtk.vtkCompositeDataSet.NAME()).split("[")[0]
        if name.startswith("sensor_"):
            continue
        geom = vtk.vtkDataSetSurfaceFilter()
        geom.SetInputData(data.GetBlock(b))
        mapper = vtk.vtkDataSetMapper()
        mapper.SetInputConnection(geom.GetOutputPort())
        actor = vtk.vtkActor()
        actor.SetMapper(mapper)
        if name == "rod":
            mapper.SetScalarModeToUsePointFieldData()
            mapper.SelectColorArray("von_mises_max")
            rng = data.GetBlock(b).GetPointData().GetArray("von_mises_max").GetRange()
            mapper.SetScalarRange(0.0, rng[1])
            lut = vtk.vtkLookupTable()
            lut.SetHueRange(0.667, 0.0)
            lut.Build()
            mapper.SetLookupTable(lut)
            bar = vtk.vtkScalarBarActor()
            bar.SetLookupTable(lut)
            bar.SetTitle("max von Mises [Pa]")
            bar.SetNumberOfLabels(4)
            bar.GetTitleTextProperty().SetColor(0, 0, 0)
            bar.GetLabelTextProperty().SetColor(0, 0, 0)
            bar.SetOrientationToHorizontal()
            bar.SetPosition(0.25, 0.03)
            bar.SetWidth(0.5)
            bar.SetHeight(0.12)
            ren.AddViewProp(bar)
        else:
            mapper.ScalarVisibilityOff()
            actor.GetProperty().SetColor(*colours.get(name, (0.5, 0.5, 0.5)))
            if data.GetBlock(b).GetNumberOfPoints() <= 4:       # point masses, markers
                actor.GetProperty().SetPointSize(12)
                actor.GetProperty().SetRenderPointsAsSpheres(True)
        ren.AddActor(actor)
    text = vtk.vtkTextActor()
    text.SetInput(f"flexible slider-crank, t = {t:.4f} s")
    text.GetTextProperty().SetColor(0, 0, 0)
    text.GetTextProperty().SetFontSize(22)
    text.SetPosition(15, size[1] - 40)
    ren.AddViewProp(text)
    ren.ResetCamera()
    ren.GetActiveCamera().Zoom(1.6)
    win = vtk.vtkRenderWindow()
    win.SetOffScreenRendering(1)
    win.SetSize(*size)
    win.AddRenderer(ren)
    win.Render()
    grab = vtk.vtkWindowToImageFilter()
    grab.SetInput(win)
    grab.Update()
    writer = vtk.vtkPNGWriter()
    writer.SetFileName(str(png))
    writer.SetInputConnection(grab.GetOutputPort())
    writer.Write()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("xdmf", type=Path)
    p.add_argument("--out", type=Path, default=Path(__file__).with_name("main_case.png"))
    p.add_argument("--time", type=float, default=0.0285)
    a = p.parse_args()
    render(a.xdmf, a.out, a.time)


if __name__ == "__main__":
    main()
