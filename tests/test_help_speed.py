"""Every command's --help is answered before PyTorch and MuJoCo load (issue 53: within a second).

Loading PyTorch takes most of a second or more on its own, so what keeps ``--help`` quick is
that no script imports it, or MuJoCo, on the way to parsing its options: the parser is built
from light modules, and the heavy ones are imported inside the functions that need them. That is
checked here without timing; benchmarks/bench_help.py times it (benchmarks/results/cli/).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ("train", "watch", "evaluate", "sweep")
HEAVY = ("torch", "mujoco")
# What a script's import, its parser and its main(["--help"]) load, from a fresh interpreter.
PROBE = """
import contextlib, importlib, io, json, sys

module = importlib.import_module({name!r})
module.build_parser()
out = io.StringIO()
code = "returned"
with contextlib.redirect_stdout(out):
    try:
        module.main(["--help"])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({{"code": code, "usage": out.getvalue().startswith("usage:"),
                  "loaded": [m for m in {heavy!r} if m in sys.modules]}}))
"""
def _python(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_exits_0_with_the_usage(name: str) -> None:
    done = _python(f"{name}.py", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:") and "--help" in done.stdout


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_loads_neither_pytorch_nor_mujoco(name: str) -> None:
    done = _python("-c", PROBE.format(name=name, heavy=HEAVY))
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["code"] == 0 and probe["usage"], probe
    assert probe["loaded"] == [], f"{name}.py --help loads {', '.join(probe['loaded'])}: import it inside the " \
                                  "functions that need it, after the options are parsed"


def test_train_settings_lists_every_config_key_with_its_default_and_meaning(capsys) -> None:
    """--settings answers what --config may say, from the fields' metadata (where the Report's table reads it)."""
    import dataclasses

    import train
    from ddpg.variants.config import VariantConfig

    with pytest.raises(SystemExit) as stopped:
        train.main(["--settings"])
    listed = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith("  ")}
    assert stopped.value.code == 0
    for field in dataclasses.fields(VariantConfig):
        assert field.metadata["doc"] in listed[field.name], field.name
