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
from dataclasses import field, fields
from typing import Any


def setting(default: Any, check: str | tuple[str, ...], doc: str, network: bool = False) -> Any:
    """A config field, declared once: its default, what it must be (a check of ``CHECKS``, or the values
    it may take), what it means (``train.py --settings``, the Report) and whether a checkpoint's shapes
    depend on it (``network``)."""
    return field(default=default, metadata={"check": check, "doc": doc, "network": network})


def given(**sizes: int | None) -> dict[str, int]:
    """The networks' widths a config sets (None: model.py's own default)."""
    return {name: size for name, size in sizes.items() if size is not None}


def built_widths(actor: Any, critic: Any) -> dict[str, int]:
    """The hidden widths of model.py's networks as built (by its layer names), for the config to record:
    a rebuilt agent (watch.py, evaluate.py, --resume) then passes them, whatever model.py's defaults are by then."""
    layers = {"actor_fc1": (actor, "fc1"), "actor_fc2": (actor, "fc2"), "critic_fc1": (critic, "fcs1"),
              "critic_fc2": (critic, "fc2")}
    widths = {key: getattr(getattr(net, name, None), "out_features", None) for key, (net, name) in layers.items()}
    return {key: width for key, width in widths.items() if isinstance(width, int)}


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


def describe() -> str:
    """Each setting a --config may give: its name, default and meaning, read from the fields' metadata
    (``train.py --settings``), so the command line says what the Report's table says, from one place."""
    import json

    from ddpg.variants.config import VariantConfig
    from ddpg_agent import DDPGConfig

    lines, seen = [], set()
    for cls, title in ((DDPGConfig, "DDPGConfig (ddpg_agent.py)"), (VariantConfig, "variants.VariantConfig, besides")):
        lines.append(f"{title}: name, default, meaning")
        for f in fields(cls):
            if f.name not in seen:
                default = "null (model.py's own)" if f.default is None else json.dumps(f.default)
                lines.append(f"  {f.name:<18} {default:<10} {f.metadata.get('doc', '')}")
                seen.add(f.name)
    return "\n".join(lines)


__all__ = ["CHECKS", "describe", "from_dict", "is_number", "network_keys", "problems"]
