"""No command is another command's library (issue 60).

What two commands share lives in ``ddpg/`` (watch.py and evaluate.py play agents through
``ddpg.reporting.playing``), so a command can change its options, its output or its imports without
breaking another. Read from the source (``ast``), not by importing it: an import inside a
function counts as much as one at the top. sweep.py runs train.py's trials, so it may import train.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ("train", "watch", "evaluate")
ALLOWED = {("sweep.py", "train")}  # sweep.py's trials are train.py's runs
SOURCES = sorted([*ROOT.glob("*.py"), *(ROOT / "ddpg").rglob("*.py")])


def imported_modules(tree: ast.AST) -> set[str]:
    """The top-level names of every module the code imports, anywhere in it: ``import a.b``,
    ``from a import b`` and ``importlib.import_module("a")`` with a constant name."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.partition(".")[0])
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.add(node.args[0].value.partition(".")[0])
    return found


def test_the_sources_are_found() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in SOURCES}
    assert {"train.py", "watch.py", "evaluate.py", "sweep.py", "ddpg/reporting/playing.py", "ddpg/run_folder/folder.py"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_command_or_ddpg_module_imports_a_command(path: Path) -> None:
    name = path.relative_to(ROOT).as_posix()
    imports = imported_modules(ast.parse(path.read_text(), filename=name))
    wrong = sorted(module for module in imports & set(COMMANDS)
                   if (name, module) not in ALLOWED and name != f"{module}.py")
    assert not wrong, f"{name} imports the command(s) {', '.join(w + '.py' for w in wrong)}: move what it uses into ddpg/"


def test_the_check_sees_every_kind_of_import() -> None:
    code = "import watch.x\nfrom train import main\ndef f():\n    importlib.import_module('evaluate')\nfrom . import watch"
    assert imported_modules(ast.parse(code)) == {"watch", "train", "evaluate"}


def test_no_code_of_the_project_edits_sys_path() -> None:
    """The benchmarks run as modules (``python -m benchmarks.X``): the project is installed (``make
    setup``), so no script reaches its packages by editing ``sys.path``."""
    sources = [*ROOT.glob("*.py"), *(ROOT / "ddpg").rglob("*.py"), *(ROOT / "reacher").rglob("*.py"),
               *(ROOT / "benchmarks").glob("*.py")]
    edits = []
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text())):
            target = node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
            if isinstance(node, ast.Assign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                target = next((t.value for t in targets if isinstance(t, ast.Subscript)), target)
            if isinstance(target, ast.Attribute) and target.attr == "path" and getattr(target.value, "id", "") == "sys":
                edits.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert edits == [], f"sys.path edited at {edits}: run the file as a module (python -m benchmarks.X) instead"
