"""Fuzz the command line with damaged inputs made from the shipped ones.

Mutated case files (``cases/*/case.toml``: keys deleted or renamed, values replaced by
other types, extreme numbers, empty, unicode and path-like strings, items duplicated,
text truncated, a byte-order mark or random bytes inserted) go through ``flexmbs check``;
mutated small meshes (``meshes/*.msh`` of at most a few hundred nodes, also as MSH 2.2)
through ``flexmbs preprocess``; mutated reduced-body files through ``flexmbs info``.
Each run is in-process (``flexmbs.cli.main.main``) and must

* return 0, or 2 with exactly one line ``flexmbs <cmd>: error: ...`` on stderr (followed
  only by the ``  - `` lines of a list of problems), never let an exception escape;
* finish within :data:`PER_RUN_SECONDS`;
* write nothing outside the test's ``tmp_path`` (Python-level writes are audited with
  :func:`sys.addaudithook`; the body cache lives three folders below ``tmp_path``, so a
  name like ``../../x`` would show as an extra entry).

The generator is seeded (``FLEXMBS_FUZZ_SEED``, default :data:`SEED`); the seed, the
number of inputs and the run time are printed.  ``FLEXMBS_FUZZ_SCALE`` scales the counts.
"""
from __future__ import annotations

import copy
import math
import os
import random
import re
import signal
import sys
import time
import tomllib
import traceback
from pathlib import Path

import h5py
import numpy as np
import pytest

from flexmbs.cli.main import main
from flexmbs.parallel.toml_writer import dumps

ROOT = Path(__file__).resolve().parents[3]
SEED = int(os.environ.get("FLEXMBS_FUZZ_SEED", "20251126"))
SCALE = float(os.environ.get("FLEXMBS_FUZZ_SCALE", "1"))
N_CASES = int(1600 * SCALE)
N_MESHES = int(250 * SCALE)
N_BODIES = int(100 * SCALE)
N_REDUCTION = int(50 * SCALE)
PER_RUN_SECONDS = 30.0
SMALL_MESHES = ("beam_hex8_10x1x1.msh", "beam_tet4_10x1x1.msh", "beam_hex27_5x1x1.msh",
                "beam_tet10_10x1x1.msh")

# -- values the mutations put in ------------------------------------------------------------
NUMBERS = [0, -1, 1, 2, 3, 0.0, -0.0, 0.5, -1.5, 1e300, -1e300, 1e-300, 1e30, 1e31,
           math.nan, math.inf, -math.inf, 2**63 - 1, -(2**63), 2**31, 10**6, 100000, 1e-12]
STRINGS = ["", " ", "x", "ü", "名前", "💥", "ground", "../../x", "../../../escape", "a/b",
           "/tmp/flexmbs_fuzz_abs", "..", ".", ".hidden", "x" * 300, "\t", "NUL", "con",
           "a.b.c", "rbe3", "clamp:rbe5", "tip:rbe3 ", "-fmbs_pc_type", "%s{}", "\\",
           "steel", "mean_axis", "interface:nope", "z", "-x", "sine", "nonexistent",
           "pin", "hole_A", "crank", "ground.x", "rod.hole_B", "mm"]
OTHERS = [[], {}, [1, 2], [1.0, 2.0, 3.0], [0, 0, 0], [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
          [["a"]], {"type": "sine"}, {"type": "ramp", "rate": 1.0}, {"axis": "z", "angle": 1},
          True, False, ["x", "y"], [1, "a", None.__class__.__name__],
          {"E": 210e9, "nu": 0.3, "rho": 7850.0}, {"E": -1, "nu": 0.6, "rho": 0}]


def _pool(rng: random.Random):
    k = rng.random()
    if k < 0.4:
        return rng.choice(NUMBERS)
    if k < 0.75:
        return rng.choice(STRINGS)
    return copy.deepcopy(rng.choice(OTHERS))


# -- case mutations ------------------------------------------------------------------------
def _base_cases() -> list[tuple[str, dict]]:
    """The shipped cases with mesh and body-file paths made absolute."""
    out = []
    for path in sorted((ROOT / "cases").glob("*/case.toml")):
        raw = tomllib.loads(path.read_text())
        for b in raw.get("bodies", []):
            for key in ("mesh", "body_file"):
                if isinstance(b.get(key), str):
                    b[key] = str((path.parent / b[key]).resolve())
        out.append((path.parent.name, raw))
    return out


def _locations(node, prefix=()):
    """Every (container, key) of the tree, with its path."""
    items = node.items() if isinstance(node, dict) else enumerate(node) \
        if isinstance(node, list) else ()
    for k, v in items:
        yield node, k, (*prefix, k)
        yield from _locations(v, (*prefix, k))


def _typo(rng: random.Random, key: str) -> str:
    if not key:
        return "x"
    i = rng.randrange(len(key))
    op = rng.randrange(4)
    if op == 0:
        return key[:i] + key[i + 1:] or "y"
    if op == 1:
        return key[:i] + rng.choice("abcxyz_") + key[i:]
    if op == 2:
        return key.upper()
    return key[:i] + key[i:][::-1]


def _mutate_tree(rng: random.Random, raw: dict) -> list[str]:
    """Apply one to three mutations to ``raw`` in place; returns their descriptions."""
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        locs = list(_locations(raw))
        if not locs:
            break
        container, key, path = rng.choice(locs)
        value = container[key]
        op = rng.choice(("delete", "replace", "replace", "replace", "rename", "duplicate",
                         "add", "path", "same_type", "same_type", "same_type", "same_type"))
        where = ".".join(map(str, path))
        if op == "same_type" and isinstance(value, (int, float)) and \
                not isinstance(value, bool):
            container[key] = rng.choice(NUMBERS)       # reaches the model, not the parser
        elif op == "same_type" and isinstance(value, str):
            container[key] = rng.choice(STRINGS + [value + "x", value.upper(), value[:-1]])
        elif op == "same_type" and isinstance(value, list) and value and \
                all(isinstance(x, (int, float)) for x in value):
            value[rng.randrange(len(value))] = rng.choice(NUMBERS)
        elif op == "same_type" and isinstance(value, bool):
            container[key] = not value
        elif op == "delete":
            del container[key]
        elif op == "replace":
            container[key] = _pool(rng)
        elif op == "rename" and isinstance(container, dict):
            new = _typo(rng, key)
            container[new] = container.pop(key)
            where += f" -> {new}"
        elif op == "duplicate" and isinstance(container, list):
            container.append(copy.deepcopy(container[key]))
        elif op == "add":
            target = container[key] if isinstance(container[key], dict) else container
            if isinstance(target, dict):
                target[rng.choice(["extra", "name", "type", "unit", "modes", "frame",
                                   "pitch", "interfaces"])] = _pool(rng)
            elif isinstance(target, list):
                target.append(_pool(rng))
        elif op == "path":
            container[key] = rng.choice(["../../x", "a/b", "/tmp/flexmbs_fuzz_abs/x",
                                         "../" * 8 + "etc/passwd", ROOT.as_posix()])
        else:
            container[key] = _pool(rng)
            op = "replace"
        done.append(f"{op} {where}")
    return done


def _mutate_text(rng: random.Random, text: str) -> tuple[bytes, str]:
    data = text.encode()
    op = rng.randrange(6)
    if op == 0:
        cut = rng.randrange(len(data) + 1)
        return data[:cut], f"truncate at {cut}"
    if op == 1:
        return b"\xef\xbb\xbf" + data, "byte-order mark"
    if op == 2:
        i = rng.randrange(len(data) + 1)
        return data[:i] + rng.randbytes(rng.randrange(1, 16)) + data[i:], f"bytes at {i}"
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    if op == 3:
        del lines[i]
        return "".join(lines).encode(), f"delete line {i}"
    if op == 4:
        lines.insert(i, lines[rng.randrange(len(lines))])
        return "".join(lines).encode(), f"duplicate line into {i}"
    return b"", "empty file"


def _case_inputs(rng: random.Random, n: int):
    bases = _base_cases()
    for name, raw in bases:                      # the unmutated cases first (fill the cache)
        yield name, dumps(raw).encode(), "unmutated"
    for i in range(n - len(bases)):
        name, raw = rng.choice(bases)
        raw = copy.deepcopy(raw)
        what = _mutate_tree(rng, raw)
        try:
            text = dumps(raw)
        except TypeError:
            text = dumps(copy.deepcopy(rng.choice(bases)[1]))
            what.append("(unwritable, reverted)")
        data = text.encode()
        if rng.random() < 0.15:
            data, how = _mutate_text(rng, text)
            what.append(how)
        yield f"{name}#{i}", data, "; ".join(what)


#: values of the reduction settings of a flexible body (each valid one preprocesses)
REDUCTION = {
    "modes": [1, 2, 3, 0, -1, 10**6, 2**62, 3.5, "4"],
    "interfaces": [["pin:rbe3"], ["nope"], [], ["pin", "pin"], ["pin", "tip:rbe2"], "pin",
                   ["pin:RBE3", "tip"], ["pin", "tip:rbe3 "], ["pin", "tip:rbe5"]],
    "frame": ["mean_axis", "interface:tip", "interface:", "interface:nope", ""],
    "unit": ["mm", "cm", "m"],
    "damping": [0.0, 0.5, 1.0, -0.1, math.nan],
    "static_modes": [True, False, 1],
    "modal_derivatives": [0, 1, 50, -1],
    "derivative_axis": ["x", "w", ""],
    "eigensolver": ["scipy", "nope", "auto"],
    "stiffening": [True, False],
    "material": ["steel", "aluminium", "unobtainium", {"E": 210e9, "nu": 0.3, "rho": 7850.0},
                 {"E": 1e-300, "nu": 0.3, "rho": 1e-300}, {"E": 1e30, "nu": 0.49, "rho": 1.0},
                 {"E": 210e9, "nu": 0.5, "rho": 7850.0}],
    "mesh": ["beam_hex8_10x1x1.msh", "nonexistent.msh", "README.md", "make_meshes.py"],
}


def _reduction_inputs(rng: random.Random, n: int):
    """The pendulum case with one to two reduction settings of its flexible body changed."""
    (name, raw), = [(k, v) for k, v in _base_cases() if k == "flexible_pendulum"]
    for i in range(n):
        case = copy.deepcopy(raw)
        body = case["bodies"][0]
        what = []
        for key in rng.sample(sorted(REDUCTION), rng.choice((1, 1, 2))):
            val = copy.deepcopy(rng.choice(REDUCTION[key]))
            if key == "mesh":
                val = str(ROOT / "meshes" / val)
            body[key] = val
            what.append(f"{key} = {val!r}")
        yield f"{name}/reduction#{i}", dumps(case).encode(), "; ".join(what)


# -- mesh and body-file mutations ----------------------------------------------------------
_NUMBER = re.compile(rb"(?<![\w.$-])-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?(?![\w.])")


def _msh22(tmp: Path) -> Path:
    import meshio
    m = meshio.read(ROOT / "meshes" / SMALL_MESHES[0], file_format="gmsh")
    out = tmp / "beam_hex8_msh22.msh"
    meshio.write(out, m, file_format="gmsh22", binary=False)
    return out


def _mutate_mesh(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    op = rng.randrange(10)
    lines = data.splitlines(keepends=True)
    if op == 0:
        cut = rng.randrange(len(data))
        return data[:cut], f"truncate at {cut}"
    if op == 1:
        nums = list(_NUMBER.finditer(data))
        done = []
        for m in rng.sample(nums, min(len(nums), rng.choice((1, 1, 3, 10)))):
            done.append(m)
        done.sort(key=lambda m: m.start(), reverse=True)
        for m in done:
            data = data[:m.start()] + rng.choice(
                [b"nan", b"inf", b"-1", b"0", b"1e308", b"99999999999", b"abc", b"", b"7",
                 b"1000000", b"-0", b"3.5"]) + data[m.end():]
        return data, f"replace {len(done)} numbers"
    if op == 2:
        i = rng.randrange(len(lines))
        del lines[i:i + rng.choice((1, 1, 5))]
        return b"".join(lines), f"delete lines from {i}"
    if op == 3:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return b"".join(lines), f"swap lines {i}, {j}"
    if op == 4:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[rng.randrange(len(lines))])
        return b"".join(lines), f"duplicate a line into {i}"
    if op == 5:
        i = rng.randrange(len(data))
        return data[:i] + rng.randbytes(rng.randrange(1, 64)) + data[i:], f"bytes at {i}"
    if op == 6:
        return rng.choice([b"", rng.randbytes(2000), b"$MeshFormat\n", b"\n\n"]), "replace all"
    if op == 7:
        return data.replace(b"clamp", rng.choice([b"clmp", b"", b"tip", b"cl amp"])), \
            "rename clamp"
    if op == 8:
        return data.replace(b"$MeshFormat\n" + data.split(b"\n")[1],
                            b"$MeshFormat\n" + rng.choice([b"3.0 0 8", b"4.1 1 8", b"x",
                                                           b"2.2 0 8", b"4.1 0 4"]), 1), \
            "header version"
    # element type codes: hex8 5, tet4 4, hex27 12, tet10 11, quad 3, tri 2
    return re.sub(rb"\n(\d+ \d+ )(5|4|12|11|3|2)( \d+\n)",
                  lambda m: b"\n" + m.group(1) + rng.choice([b"99", b"6", b"17", b"1"])
                  + m.group(3), data, count=1), "element type"


def _mutate_body(rng: random.Random, src: Path, dst: Path) -> str:
    data = src.read_bytes()
    op = rng.randrange(8)
    if op == 0:
        cut = rng.randrange(len(data))
        dst.write_bytes(data[:cut])
        return f"truncate at {cut}"
    if op == 1:
        i = rng.randrange(512, len(data))
        dst.write_bytes(data[:i] + rng.randbytes(rng.randrange(8, 256)) + data[i + 8:])
        return f"garbage at {i}"
    dst.write_bytes(data)
    with h5py.File(dst, "r+") as f:
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        name = rng.choice(names)
        if op == 2:
            del f[name]
            return f"delete {name}"
        if op == 3:
            a = np.array(f[name][()], dtype=float)
            if a.size:
                a.flat[rng.randrange(a.size)] = rng.choice([np.nan, np.inf, 1e308, -1.0])
            del f[name]
            f[name] = a
            return f"bad value in {name}"
        if op == 4:
            del f[name]
            f[name] = np.zeros(rng.choice([(0,), (2, 2), (7,), ()]))
            return f"reshape {name}"
        if op == 5:
            f.attrs[rng.choice(["version", "format", "frame", "name"])] = rng.choice(
                ["one", 2, -1, "", np.nan, "mean_axis"])
            return "attribute"
        if op == 6:
            grp = rng.choice([g for g in ("markers", "faces", "material", "provenance")
                              if g in f])
            target = f[grp]
            if grp in ("markers", "faces") and len(target):
                target = target[rng.choice(list(target))]
            key = rng.choice(list(target.attrs) or ["order"])
            target.attrs[key] = rng.choice(["x", -5, "{bad json", 1e300, b"\xff\xfe"])
            return f"attribute {grp}/{key}"
        del f[rng.choice(["invariants", "mesh", "markers", "stiffness"])]
        return "delete group"


# -- the checks ----------------------------------------------------------------------------
class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout(f"no answer within {PER_RUN_SECONDS} s")


_AUDIT = {"on": False, "writes": []}


def _audit(event, args):
    if not _AUDIT["on"]:
        return
    if event == "open":
        path, mode, flags = args
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        if writing and isinstance(path, (str, bytes, os.PathLike)):
            _AUDIT["writes"].append(os.fsdecode(path))
    elif event in ("os.mkdir", "os.remove", "os.rmdir", "os.truncate"):
        if isinstance(args[0], (str, bytes, os.PathLike)):
            _AUDIT["writes"].append(os.fsdecode(args[0]))
    elif event == "os.rename":
        _AUDIT["writes"] += [os.fsdecode(a) for a in args[:2]
                             if isinstance(a, (str, bytes, os.PathLike))]


if not getattr(sys, "_flexmbs_fuzz_audit", False):
    sys.addaudithook(_audit)
    sys._flexmbs_fuzz_audit = True


def _allowed_write(path: str, tmp: Path) -> bool:
    p = Path(os.path.abspath(path))
    if p.is_relative_to(tmp):
        return True
    # caches of compiled code and of the libraries, not outputs of flexmbs
    return "__pycache__" in p.parts or p.suffix in (".nbi", ".nbc", ".pyc") or \
        any(part in (".cache", "matplotlib", ".config") for part in p.parts)


def _run(argv: list[str], capsys) -> tuple[int | None, str, str, str]:
    """(exit status, stdout, stderr, escaped exception) of one in-process run."""
    capsys.readouterr()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, PER_RUN_SECONDS)
    _AUDIT["on"] = True
    escaped, rc = "", None
    try:
        rc = main(argv)
    except BaseException as exc:  # noqa: BLE001 - anything escaping main is a finding
        escaped = "".join(traceback.format_exception(exc)[-3:]).strip()
    finally:
        _AUDIT["on"] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err, escaped


def _verdict(cmd: str, rc, out: str, err: str, escaped: str) -> str:
    """'' if the run ended as it must, else what went wrong."""
    if escaped:
        return f"exception escaped main: {escaped}"
    if "Traceback (most recent call last)" in out + err:
        return "a traceback was printed"
    prefix = f"flexmbs {cmd}: error: "
    lines = err.splitlines()
    errors = [i for i, ln in enumerate(lines) if ln.startswith(prefix)]
    if rc == 0:
        return f"exit 0 with an error line: {lines[errors[0]]}" if errors else ""
    if rc != 2:
        return f"exit status {rc}, expected 0 or 2; stderr ends: {lines[-3:]}"
    if len(errors) != 1:
        return f"expected one line starting {prefix!r}, found {len(errors)}: {lines[-5:]}"
    rest = lines[errors[0] + 1:]
    if any(not ln.startswith("  - ") for ln in rest):
        return f"lines after the error line: {rest[:3]}"
    if len(lines[errors[0]]) <= len(prefix) + 5:
        return f"empty error message: {lines[errors[0]]!r}"
    return ""


def test_fuzz_cli(tmp_path, capsys):
    rng = random.Random(SEED)
    t_start = time.perf_counter()
    work = tmp_path / "a" / "b" / "c"
    bodies, cases, meshes, outs = (work / d for d in ("bodies", "cases", "meshes", "out"))
    for d in (cases, meshes, outs):
        d.mkdir(parents=True)
    failures, counts, slowest = [], {"check": 0, "preprocess": 0, "info": 0}, (0.0, "")
    _AUDIT["writes"].clear()

    def one(cmd, argv, label, what):
        nonlocal slowest
        t = time.perf_counter()
        rc, out, err, escaped = _run(argv, capsys)
        dt = time.perf_counter() - t
        counts[cmd] += 1
        slowest = max(slowest, (dt, label))
        problem = _verdict(cmd, rc, out, err, escaped)
        if dt > PER_RUN_SECONDS:
            problem = problem or f"took {dt:.1f} s"
        if problem:
            failures.append(f"{cmd} {label} [{what}]: {problem}")
        return rc

    # 1. case files through `flexmbs check`
    for i, (label, data, what) in enumerate(_case_inputs(rng, N_CASES)):
        path = cases / f"case{i:04d}.toml"
        path.write_bytes(data)
        one("check", ["check", str(path), "--body-dir", str(bodies)], label, what)

    # 1b. reduction settings of a flexible body (preprocessing) through `flexmbs check`
    for i, (label, data, what) in enumerate(_reduction_inputs(rng, N_REDUCTION)):
        path = cases / f"reduction{i:04d}.toml"
        path.write_bytes(data)
        one("check", ["check", str(path), "--body-dir", str(bodies)], label, what)

    # 2. meshes through `flexmbs preprocess`
    sources = [ROOT / "meshes" / m for m in SMALL_MESHES] + [_msh22(meshes)]
    for i in range(N_MESHES):
        src = rng.choice(sources)
        data, what = _mutate_mesh(rng, src.read_bytes())
        path = meshes / f"mesh{i:04d}.msh"
        path.write_bytes(data)
        argv = ["preprocess", str(path), "--material", "steel", "--modes",
                rng.choice(["2", "3", "100000"]), "--interface", "clamp",
                "--no-stiffening", "-o", str(outs / f"mesh{i:04d}.h5")]
        one("preprocess", argv, f"{src.name}#{i}", what)

    # 3. reduced-body files through `flexmbs info`
    good = outs / "good.h5"
    assert main(["preprocess", str(sources[0]), "--material", "steel", "--modes", "3",
                 "--interface", "clamp", "--interface", "tip:rbe3", "-o", str(good)]) == 0
    for i in range(N_BODIES):
        path = outs / f"body{i:04d}.h5"
        what = _mutate_body(rng, good, path)
        one("info", ["info", str(path)], f"body#{i}", what)

    outside = sorted({w for w in _AUDIT["writes"] if not _allowed_write(w, tmp_path)})
    extra = sorted(p.name for p in tmp_path.iterdir() if p.name != "a") + \
        sorted(p.name for p in (tmp_path / "a").iterdir() if p.name != "b") + \
        sorted(p.name for p in (tmp_path / "a" / "b").iterdir() if p.name != "c")
    wall = time.perf_counter() - t_start
    total = sum(counts.values())
    with capsys.disabled():
        print(f"\nfuzz: seed {SEED}, {total} inputs ({counts['check']} case files, "
              f"{N_REDUCTION} of them with changed reduction settings, "
              f"{counts['preprocess']} meshes, {counts['info']} body files), {wall:.1f} s, "
              f"slowest {slowest[0]:.2f} s ({slowest[1]}), {len(failures)} failures")
    assert total >= 500 or SCALE < 1
    assert not outside, f"files written outside {tmp_path}: {outside[:10]}"
    assert not extra, f"files escaped the work folder into {tmp_path}: {extra}"
    assert not failures, f"{len(failures)} of {total} fuzz inputs (seed {SEED}) failed:\n" + \
        "\n".join(failures[:40])


if __name__ == "__main__":   # pragma: no cover
    sys.exit(pytest.main([__file__, "-q", "-s"]))
