"""Every #include of the C++ library goes down the layers, never up.

The map is cmake/layers.json (the one place; CMakeLists.txt builds its targets from it): each layer
names its sources (src/...), its public headers (under include/spiraltorch/; a file belongs to the
first layer naming it) and the layers it may use. A file of layer L may include headers of L and of the layers L uses; anything else fails here
with the file, the line and the two layers. docs/architecture.md explains the layers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
MAP_PATH = ROOT / "cmake" / "layers.json"
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cu", ".cuh"}


def load_map(path: Path = MAP_PATH) -> dict:
    return json.loads(path.read_text())


def layer_of(rel: str, layers: dict[str, dict]) -> str | None:
    """The layer owning a repository path (src/... or include/spiraltorch/...), or None."""
    for name, layer in layers.items():
        for src in layer["src"]:
            if rel == src or rel.startswith(src + "/"):
                return name
        for header in layer["headers"]:
            full = "include/spiraltorch/" + header
            if rel == full or (header.endswith("/") and rel.startswith(full)):
                return name
            top_level = rel.startswith("include/spiraltorch/") and "/" not in rel[len("include/spiraltorch/") :]
            if header == "*.h" and top_level:
                return name
    return None


def included_layer(include: str, includer: Path, root: Path, layers: dict[str, dict]) -> str | None:
    """The layer of an #include "..." target: a public header, a src/-relative internal header or
    a file beside the includer (a header of the includer's own directory)."""
    if include.startswith("spiraltorch/"):
        return layer_of("include/" + include, layers)
    if (root / "src" / include).exists():
        return layer_of("src/" + include, layers)
    beside = includer.parent / include
    if beside.exists():
        return layer_of(beside.resolve().relative_to(root).as_posix(), layers)
    return None


def library_files(root: Path) -> list[Path]:
    files = []
    for top in (root / "src", root / "include" / "spiraltorch"):
        files += [p for p in top.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()]
    return sorted(files)


def violations(root: Path, layers: dict[str, dict], exceptions: dict[str, dict] | None = None) -> list[str]:
    """Each upward #include as "file:line: layer includes layer (header)"."""
    exceptions = exceptions or {}
    found = []
    for path in library_files(root):
        rel = path.relative_to(root).as_posix()
        owner = layer_of(rel, layers)
        if owner is None:
            found.append(f"{rel}: no layer in cmake/layers.json owns this file")
            continue
        allowed = {owner, *layers[owner]["uses"]}
        exempt = set(exceptions.get(rel, {}).get("may_include", []))
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE_RE.match(line)
            if not match:
                continue
            target = included_layer(match.group(1), path, root, layers)
            if target is None or target in allowed or target in exempt:
                continue
            found.append(f"{rel}:{number}: {owner} includes {target} ({match.group(1)})")
    return found


def map_problems(layers: dict[str, dict]) -> list[str]:
    """Unknown layers, cycles, and core layers that use an extension."""
    problems = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            problems.append("cycle: " + " -> ".join(path + [name]))
            return
        state[name] = "open"
        for used in layers[name]["uses"]:
            if used not in layers:
                problems.append(f"{name} uses the unknown layer {used}")
            else:
                visit(used, path + [name])
        state[name] = "done"

    for name in layers:
        visit(name, [])
    core = {name for name, layer in layers.items() if layer["target"] == "spiraltorch_core"}
    for name in sorted(core):
        for used in sorted(set(layers[name]["uses"]) - core):
            problems.append(f"core layer {name} uses the extension layer {used}")
    return problems


def test_no_layer_includes_a_layer_it_does_not_use():
    layer_map = load_map()
    assert violations(ROOT, layer_map["layers"], layer_map["exceptions"]) == []


def test_the_map_is_acyclic_and_the_core_uses_no_extension():
    assert map_problems(load_map()["layers"]) == []


def test_every_exception_is_still_needed():
    # An exception whose include went away is dropped from the map, so it cannot hide a new one.
    layer_map = load_map()
    without = violations(ROOT, layer_map["layers"])
    for path, exception in layer_map["exceptions"].items():
        assert exception["why"], path
        for layer in exception["may_include"]:
            assert any(v.startswith(path + ":") and f" includes {layer} " in v for v in without), (path, layer)


def test_the_checks_catch_an_upward_include_and_a_cycle(tmp_path: Path):
    # A miniature tree: nn includes a Z-space header, which nn does not use.
    (tmp_path / "src" / "nn").mkdir(parents=True)
    (tmp_path / "include" / "spiraltorch" / "zspace").mkdir(parents=True)
    (tmp_path / "include" / "spiraltorch" / "zspace" / "ball.h").write_text("#pragma once\n")
    (tmp_path / "src" / "nn" / "layer.cpp").write_text(
        '#include <vector>\n#include "spiraltorch/zspace/ball.h"\n'
    )
    layers = {
        "nn": {"target": "spiraltorch_core", "src": ["src/nn"], "headers": ["nn/"], "uses": []},
        "zspace": {"target": "spiraltorch_zspace", "src": ["src/zspace"], "headers": ["zspace/"], "uses": ["nn"]},
    }
    assert violations(tmp_path, layers) == ["src/nn/layer.cpp:2: nn includes zspace (spiraltorch/zspace/ball.h)"]
    assert violations(tmp_path, layers, {"src/nn/layer.cpp": {"may_include": ["zspace"], "why": "test"}}) == []
    assert map_problems(layers) == []
    layers["nn"]["uses"] = ["zspace"]
    assert map_problems(layers) == [
        "cycle: nn -> zspace -> nn",
        "core layer nn uses the extension layer zspace",
    ]
