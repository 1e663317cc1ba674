"""The house's shape: modules small enough to read, imports in layers, no import cycle (issue 67).

Layers, lowest first: ``envkit`` (the environment kit: what every scene shares, and the CPU count the learner
shares too), ``reacher`` and ``crawler`` (the scenes, each only its own and neither importing the other),
``model.py`` and ``ddpg_agent.py`` (the course's files), ``ddpg`` (the package around them), the
commands (``train.py``, ``watch.py``, ``evaluate.py``, ``sweep.py``), ``benchmarks``. A module imports
from its own layer or lower ones, anywhere in its code; and the modules' top-level imports form no
cycle, so each can be imported on its own. Inside ``ddpg``, its parts (the modules at its top level and
its packages, ``ddpg.run_folder`` say) stand in layers as well, and a package grouping modules by their
job hands none of their names on (issue 86).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"envkit": 0, "reacher": 1, "crawler": 1, "model": 2, "ddpg_agent": 2, "ddpg": 3, "train": 4, "watch": 4, "evaluate": 4,
          "sweep": 4, "benchmarks": 5}
MAX_LINES = 450


def _modules() -> dict[str, Path]:
    found = {p.stem: p for p in ROOT.glob("*.py") if p.stem in LAYERS}
    for package in ("envkit", "reacher", "crawler", "ddpg", "benchmarks"):
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(path: Path, top_level_only: bool, modules: dict[str, Path]) -> set[str]:
    """The modules imported: ``from package import submodule`` counts as the submodule alone."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            subs = {f"{node.module}.{alias.name}" for alias in node.names} & set(modules)
            out |= subs if len(subs) == len(node.names) else {node.module} | subs
    return out


def test_no_module_of_the_packages_is_over_450_lines() -> None:
    long = {name: n for name, path in _modules().items() if name.split(".")[0] in ("envkit", "reacher", "crawler", "ddpg")
            and (n := path.read_text().count("\n")) > MAX_LINES}
    assert long == {}, f"split these modules (at most {MAX_LINES} lines each, one job per file): {long}"


def test_imports_go_down_the_layers() -> None:
    upward = []
    for name, path in _modules().items():
        mine = LAYERS[name.split(".")[0]]
        for imported in _imports(path, False, _modules()):
            theirs = LAYERS.get(imported.split(".")[0])
            if theirs is not None and theirs > mine:
                upward.append(f"{name} imports {imported}")
    assert upward == [], f"imports up to a higher layer: {sorted(set(upward))}"


@pytest.mark.parametrize("top_level_only", [True, False])
def test_no_import_cycle(top_level_only: bool) -> None:
    """None at the top level; and none through imports made inside functions either, so a module
    never needs another that needs it back (the package's modules)."""
    modules = _modules()
    graph = {name: {m for m in _imports(path, top_level_only, modules) if m in modules and m != name}
             for name, path in modules.items() if top_level_only or name.split(".")[0] == "ddpg"}
    cycle = _cycle(graph)
    assert cycle is None, f"an import cycle: {' -> '.join(cycle or [])}"


def test_the_parts_of_ddpg_import_each_other_in_no_circle() -> None:
    """``ddpg/``'s parts (a module at its top level, or a package such as ``ddpg.run_folder``) stand in
    layers too, so that each can be read knowing only those below it: through any import, anywhere in
    the code, none reaches back to one that imports it."""
    modules = _modules()
    parts: dict[str, set[str]] = {}
    for name, path in modules.items():
        if name.count(".") >= 1 and name.split(".")[0] == "ddpg":
            part = ".".join(name.split(".")[:2])
            parts.setdefault(part, set()).update(".".join(m.split(".")[:2]) for m in _imports(path, False, modules)
                                                 if m.split(".")[0] == "ddpg" and m.count(".") >= 1)
    graph = {part: imported - {part} for part, imported in parts.items()}
    cycle = _cycle(graph)
    assert cycle is None, f"ddpg's parts import each other in a circle: {' -> '.join(cycle or [])}"


@pytest.mark.parametrize("package", ["run_folder", "command_line", "reporting"])
def test_a_package_of_ddpg_hands_nothing_on(package: str) -> None:
    """One way in to each name, the module that owns it: a package that re-exported its modules' names
    would be a second way, which some importers would take and others go around (issue 86: the run
    folder's old face, ``ddpg/rundir.py``). Its ``__init__.py`` is its map, a docstring."""
    tree = ast.parse((ROOT / "ddpg" / package / "__init__.py").read_text())
    code = [node for node in tree.body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
    assert code == [], f"ddpg/{package}/__init__.py holds code: import each name from its own module instead"


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (each node's successors), as the path around it; None when it has none."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt in graph and nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_learners_do_not_import_the_environment() -> None:
    """The update and its back-ends know nothing of Reacher: what they share with it (the CPU count) is in ``envkit``."""
    modules = _modules()
    learners = {n: p for n, p in modules.items() if n in ("model", "ddpg_agent") or n.startswith("ddpg.backends")}
    found = sorted(f"{name} imports {m}" for name, path in learners.items() for m in _imports(path, False, modules)
                   if m.split(".")[0] == "reacher")
    assert found == [], f"a learner imports the environment: {found}"


def test_the_learners_package_names_no_scene() -> None:
    """``ddpg/`` learns on any task: what it needs of a scene (Reacher's episode length and target, the
    goals goal paths relabels) it takes through ``ddpg.tasks``, the one module that opens the scenes."""
    modules = _modules()
    naming = sorted(f"{name} imports {imported}" for name, path in modules.items()
                    if name.split(".")[0] == "ddpg" and name != "ddpg.tasks"
                    for imported in _imports(path, False, modules) if imported.split(".")[0] in ("reacher", "crawler"))
    assert naming == [], f"only ddpg/tasks.py may import a scene: {naming}"


def test_each_scene_holds_only_its_own() -> None:
    """``reacher/`` and ``crawler/`` share what they share through ``envkit/`` (issue 75): neither imports the
    other, and the old home of the shared code, ``common/``, is gone."""
    modules = _modules()
    across = sorted(f"{name} imports {imported}" for name, path in modules.items()
                    for imported in _imports(path, False, modules)
                    if {name.split(".")[0], imported.split(".")[0]} == {"reacher", "crawler"})
    assert across == [], f"a scene imports the other (move what they share to envkit/): {across}"
    # Python files only: a checkout that ran the old code keeps common/__pycache__/, which git leaves behind.
    left = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "common").rglob("*.py"))
    assert left == [], f"common/ is gone (what the scenes and the learner share is envkit/), yet: {left}"
