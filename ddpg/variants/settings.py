"""What each setting must be, read from where it is declared.

The agent's settings are declared once, as fields of ``ddpg_agent.DDPGConfig`` (and of
``variants.VariantConfig``), each through ``ddpg_agent.setting``: its default, what it must be
(``check``) and whether a checkpoint's shapes depend on it (``network``). The course file only
declares them; this package checks them (``problems``), builds configs from what users give
(``from_dict``) and derives its key lists from the same metadata (``variants.config.NETWORK_KEYS``),
so no list of names is written out twice.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any


def is_number(value: Any) -> bool:
    """A finite int or float (not a bool): what JSON configs may give for a number."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


# A check's name in a field's metadata: its test, and the words that say what it wants.
CHECKS = {"count": (lambda v: _whole(v, 1), "a whole number >= 1"),
          "size": (lambda v: v is None or _whole(v, 1), "a whole number >= 1, or null for model.py's own"),
          "whole": (lambda v: _whole(v, 0), "a whole number >= 0"),
          ">=0": (lambda v: is_number(v) and v >= 0, "a number >= 0"),
          "fraction": (lambda v: is_number(v) and 0 <= v <= 1, "a number in [0, 1]"),
          "rate": (lambda v: is_number(v) and 0 < v <= 1, "a number in (0, 1]"),
          "bool": (lambda v: isinstance(v, bool), "true or false")}


WHOLE_CHECKS = ("count", "size", "whole")  # the checks that want an int


def shown(value: Any, whole: bool = False) -> str:
    """A value as a message quotes it, its type said where the type is what is wrong: a JSON config's
    "128" is a string and (where a ``whole`` number is wanted) 128.0 a float, which a bare '128' or 128.0
    would hide from the reader."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        return f"the string {value!r}"
    if value is None:
        return "null"
    if isinstance(value, float) and whole:
        return f"{value!r} (a float)"
    if isinstance(value, (list, tuple, dict)):
        return f"{value!r} ({'an object' if isinstance(value, dict) else 'a list'})"
    return repr(value)


def problems(config: Any) -> list[str]:
    """What is wrong with each field's value by its own check, one message each ([] when nothing is).
    A check is a name in ``CHECKS`` or the tuple of values the field may take."""
    out = []
    for f in fields(config):
        check, value = f.metadata["check"], getattr(config, f.name)
        if isinstance(check, str) and not CHECKS[check][0](value):
            out.append(f"{f.name} must be {CHECKS[check][1]}, got {shown(value, check in WHOLE_CHECKS)}")
        elif not isinstance(check, str) and value not in check:
            out.append(f"{f.name} must be one of {list(check)}, got {value!r}")
    return out


def from_dict(cls: type, values: dict[str, Any], hint: str = "") -> Any:
    """A config of class ``cls`` from a dict; unknown keys and bad values are one ValueError that
    names them (the valid keys, with ``hint``, for unknown ones)."""
    known = [f.name for f in fields(cls)]
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(f"unknown config key(s) {unknown}; valid keys: {known}{hint}")
    config = cls(**values)
    found = config.problems() if hasattr(config, "problems") else problems(config)
    if found:
        raise ValueError("; ".join(found))  # (not the class's name: a plain DDPG setting is read by VariantConfig)
    return config


def network_keys(cls: type) -> tuple[str, ...]:
    """The fields a checkpoint's shapes or kind of network depend on (``network=True``)."""
    return tuple(f.name for f in fields(cls) if f.metadata["network"])


__all__ = ["CHECKS", "from_dict", "is_number", "network_keys", "problems", "shown"]
