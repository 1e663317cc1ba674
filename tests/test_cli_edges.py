"""Command lines at their edges: every parser refuses abbreviations."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_command_line_refuses_abbreviated_options() -> None:
    """argparse takes '--conf' for '--config' unless told not to: a typo then sets another option."""
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    parsers = []
    for name in tracked.stdout.split():
        for node in ast.walk(ast.parse((ROOT / name).read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "ArgumentParser":
                refuses = any(k.arg == "allow_abbrev" and isinstance(k.value, ast.Constant) and k.value.value is False
                              for k in node.keywords)
                parsers.append((f"{name}:{node.lineno}", refuses))
    assert len(parsers) >= 13  # train, watch, evaluate, sweep, the stand-in and the benchmarks
    assert [where for where, refuses in parsers if not refuses] == []
