"""Checking what users give: command-line argument types shared by train.py, watch.py and
the benchmarks (a config's values are checked where they are declared: ``ddpg_agent.setting``).

Each argument type turns a bad value into an argparse error that names the problem and the
expected form (argparse then prints the usage and exits with status 2, without a traceback).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
from pathlib import Path
from typing import Any


def _int_at_least(minimum: int, text: str, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    return _int_at_least(1, text, "a positive integer")


def non_negative_int(text: str) -> int:
    """An integer >= 0."""
    return _int_at_least(0, text, "a non-negative integer")


# PyTorch seeds its generators with up to 64 bits (torch.manual_seed refuses 2**64 with
# "Overflow when unpacking long long"), and the project seeds some generators with the seed
# plus a small offset (the metrics' probe: + 7919, a second critic: + 1): up to 2**63 - 1
# leaves room for those, and is also the most any library that takes a signed 64-bit seed
# accepts. NumPy's generators take any non-negative integer.
SEED_MAX = 2**63 - 1


def random_seed(text: str) -> int:
    """A random seed, 0 to ``SEED_MAX``: the one check of every command line's --seed, so a
    seed PyTorch cannot take is refused here rather than in a traceback after the run began."""
    expected = f"a seed: an integer from 0 to 2**63 - 1 ({SEED_MAX})"
    value = _int_at_least(0, text, expected)
    if value > SEED_MAX:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def path_text(text: str) -> str:
    """A file or folder path, not empty: an empty one would be taken for the current folder."""
    if text == "":
        raise argparse.ArgumentTypeError(f"expected a path, got {text!r} (for the current folder, write .)")
    return text


def _finite(text: str, alternative: str = "") -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number{alternative}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number{alternative}, got {text!r}")
    return value


def finite_float(text: str) -> float:
    """Any finite number: 'nan' and 'inf' would reach run.json, which JSON cannot hold."""
    return _finite(text)


def finite_float_or_off(text: str) -> float | None:
    """A finite number, or 'off' (None): a setting that can be turned off (train.py --good-score)."""
    return None if text.strip().lower() == "off" else _finite(text, " or 'off'")


def positive_float(text: str) -> float:
    """A finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def json_object(text: str) -> dict[str, Any]:
    """A JSON object, inline (``'{"tau": 0.02}'``) or the path of a .json file holding one."""
    example = "'{\"lr_actor\": 0.001, \"batch_size\": 128}' or the path of a .json file"
    source = text
    if not text.lstrip().startswith(("{", "[")):
        path = Path(text)
        if not path.is_file():
            raise argparse.ArgumentTypeError(
                f"{text!r} is neither a JSON object nor an existing file; expected {example}")
        source = path.read_text()
    try:
        value = json.loads(source)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(
            f"malformed JSON ({exc.msg} at char {exc.pos}); expected {example}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


def given_options(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The options ``argv`` sets, each named ``--dest`` (``--max-t``) whatever its spelling:
    ``--seed 5``, ``--seed=5`` and an alias (``--max-episodes`` for ``--episodes``) all count,
    so a check of what was given cannot be sidestepped by the form it was typed in. ``argv``
    must already parse (parse it first: this parse's errors would name a copy)."""
    probe = copy.deepcopy(parser)
    for action in probe._actions:  # no defaults: only what argv gives lands in the namespace
        action.default = argparse.SUPPRESS
    return {"--" + dest.replace("_", "-") for dest in vars(probe.parse_args(argv))}
