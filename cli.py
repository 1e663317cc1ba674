"""Command-line argument types shared by train.py, watch.py and the benchmarks.

Each turns a bad value into an argparse error that names the problem and the expected form
(argparse then prints the usage and exits with status 2, without a traceback).
"""

from __future__ import annotations

import argparse
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
    """An integer >= 0 (seeds)."""
    return _int_at_least(0, text, "a non-negative integer")


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
