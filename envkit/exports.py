"""A package's lazy exports: ``from reacher import ReacherEnvironment`` loads MuJoCo only when asked,
so ``import reacher`` (and ``reacher.launch`` in a venv without MuJoCo) stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: each name of ``exports`` is imported from the
    module it maps to on first use; any other name raises the AttributeError Python would."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            return getattr(importlib.import_module(exports[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


__all__ = ["lazy_getattr"]
