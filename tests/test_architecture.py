"""The layers of docs/architecture.md hold: every import of the package goes down (or stays
inside its own package), there is no import cycle between modules, ``flexmbs.system``
does not touch PETSc, and no module reaches into another object's private names.

Reference: the layer table of docs/architecture.md (:data:`LAYERS`, checked against the
document's text) and the source itself, read with ``ast`` (nothing is imported).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "flexmbs"

#: rank of each unit (a subpackage or a top-level module of flexmbs): imports go from a
#: higher rank to a lower one; units of one rank do not import each other
LAYERS = {
    "errors": 0, "compiled": 0, "petsc_c": 0, "_version": 0, "kernel_cache": 0,
    "capability": 0,
    "io": 1, "kinematics": 1, "analysis": 1,
    "fe": 2,
    "reduction": 3,
    "bodies": 4,
    "constraints": 5, "forces": 5, "sensors": 5,
    "system": 6,
    "integrate": 7,
    "post": 8, "relative": 8,
    "simulate": 9,
    "case": 10,
    "parallel": 11,
    "cli": 12, "api": 12,
    "__init__": 13,
    "__main__": 14,
}


def modules() -> dict[str, Path]:
    """``flexmbs.x.y`` -> file, for every module of the package."""
    out = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = p.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


MODULES = modules()


def unit(module: str) -> str:
    """The layer unit of a module: ``flexmbs.system.assembly`` -> ``system``."""
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def imports(module: str, path: Path) -> list[tuple[str, int]]:
    """The flexmbs modules that ``module`` imports (anywhere in the file), with lines."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:                 # `from flexmbs import petsc_c`: a module
                sub = f"{target}.{a.name}"
                found.append((sub if sub in MODULES else target, node.lineno))
    return [(t, line) for t, line in found if t == "flexmbs" or t.startswith("flexmbs.")]


def test_the_layer_table_is_the_documented_one():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for name in LAYERS:
        if not name.startswith("_"):
            assert re.search(rf"`{name}`", doc), f"docs/architecture.md does not name `{name}`"
    units = {unit(m) for m in MODULES}
    assert units <= set(LAYERS), f"units without a layer: {sorted(units - set(LAYERS))}"


def test_imports_go_down():
    wrong = []
    for module, path in MODULES.items():
        a = unit(module)
        for target, line in imports(module, path):
            b = unit(target)
            if a != b and not LAYERS[a] > LAYERS[b]:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {a} (layer {LAYERS[a]}) "
                             f"imports {target} ({b}, layer {LAYERS[b]})")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles_between_modules():
    graph = {m: {t for t, _ in imports(m, p) if t in MODULES and t != m}
             for m, p in MODULES.items()}
    # a package's __init__ importing its own modules is how packages are made: the
    # edge module -> its own package's __init__ is not a cycle of code
    for m in graph:
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m, stack):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycle.extend(stack[stack.index(t):] + [t])
                return True
            if t not in state and visit(t, stack):
                return True
        stack.pop()
        state[m] = 2
        return False

    for m in sorted(graph):
        if m not in state and visit(m, []):
            break
    assert not cycle, " -> ".join(cycle)


def test_system_does_not_touch_petsc():
    for module, path in MODULES.items():
        if unit(module) != "system":
            continue
        text = path.read_text()
        assert "petsc4py" not in text and "petsc_c" not in text, path


#: documented public names that begin with an underscore (``os._exit``: the end of a
#: process without the interpreter's teardown, :func:`flexmbs.kernel_cache.
#: end_interrupted_import`)
PUBLIC_UNDERSCORED = frozenset({"os._exit"})


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_reach_ins(module):
    """No ``other._name`` (only ``self._name``/``cls._name``), and no ``from x import
    _name`` across modules."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")) \
                    and ast.unparse(node) not in PUBLIC_UNDERSCORED:
                bad.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("flexmbs"):
            bad += [f"line {node.lineno}: from {node.module} import {a.name}"
                    for a in node.names if a.name.startswith("_")
                    and not a.name.startswith("__") and f"{node.module}.{a.name}" not in MODULES]
    for target, line in imports(module, path):   # another package's private module
        parts = target.split(".")
        if any(x.startswith("_") and not x.startswith("__") for x in parts[2:]) \
                and unit(target) != unit(module):
            bad.append(f"line {line}: imports {target}")
    assert not bad, f"{path.relative_to(ROOT)}: " + "; ".join(bad)
