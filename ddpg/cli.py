"""Checking what users give: command-line argument types shared by train.py, watch.py and
the benchmarks, and the checks of a config's values (``CheckedConfig``).

Each argument type turns a bad value into an argparse error that names the problem and the
expected form (argparse then prints the usage and exits with status 2, without a traceback).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, ClassVar


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
    """An integer >= 0 (seeds)."""
    return _int_at_least(0, text, "a non-negative integer")


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


def is_number(value: Any) -> bool:
    """A finite int or float (not a bool): what JSON configs may give for a number."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class CheckedConfig:
    """Checks for a dataclass of settings (``ddpg_agent.DDPGConfig``), declared by its class
    attributes: ``COUNTS`` (whole numbers >= 1), ``NON_NEGATIVE`` (numbers >= 0) and
    ``FRACTIONS`` (numbers in [0, 1], ``tau`` above 0); a field whose default is a bool
    takes true or false only. A bad value is a ValueError at
    construction that names every problem."""

    COUNTS: ClassVar[tuple[str, ...]] = ()
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = ()
    FRACTIONS: ClassVar[tuple[str, ...]] = ()
    UNKNOWN_HINT: ClassVar[str] = ""  # added to the message for unknown keys

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ValueError(f"invalid {type(self).__name__}: " + "; ".join(problems))

    def problems(self) -> list[str]:
        """What is wrong with the values, one message each ([] when nothing is)."""
        problems = [f"{name} must be >= 1, got {getattr(self, name)!r}" for name in self.COUNTS
                    if not isinstance(getattr(self, name), int) or isinstance(getattr(self, name), bool)
                    or getattr(self, name) < 1]
        problems += [f"{name} must be a number >= 0, got {getattr(self, name)!r}" for name in self.NON_NEGATIVE
                     if not is_number(getattr(self, name)) or getattr(self, name) < 0]
        for name in self.FRACTIONS:
            value = getattr(self, name)
            if not is_number(value) or not 0 <= value <= 1 or (name == "tau" and value == 0):
                interval = "(0, 1]" if name == "tau" else "[0, 1]"
                problems.append(f"{name} must be a number in {interval}, got {value!r}")
        problems += [f"{f.name} must be true or false, got {getattr(self, f.name)!r}"
                     for f in fields(self) if isinstance(f.default, bool)  # type: ignore[arg-type]
                     and not isinstance(getattr(self, f.name), bool)]
        return problems

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Any:
        """Build a config from a dict; unknown keys are an error that lists the valid ones."""
        known = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown config key(s) {unknown}; valid keys: {known}{cls.UNKNOWN_HINT}")
        return cls(**values)
