"""Variants compose or refuse: a piece's part must run in every update, whatever else is switched on.

A piece replaces named parts (``registry.PARTS``). Composed with other pieces, a subclass or an
edited ``ddpg_agent.py``, a part can be silently skipped: a class in front of it that replaces the
same part without calling ``super()`` (a piece overriding ``critic_loss`` leaves the second of the
twin critics untrained), or a caller that no longer calls it (a ``learn`` written in the course's
order, without ``optimise``, turns TD3's policy delay off). ``problem`` reads the composed class's
code for both and names the two parts in one line; ``VariantAgent`` refuses to be built with one.
A piece that computes a part itself for the pieces behind it says so (``Variant.takes_over``: CrossQ's
target, from the action and bonus a piece behind gives through ``next_action``), and one behind that
takes part that way composes with it.
"""

from __future__ import annotations

import functools
import types
from typing import Any

from ddpg.variants import registry


def code_names(code: types.CodeType) -> set[str]:
    """Every name a code object and the functions inside it refer to."""
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        out |= set(c.co_names) | set(c.co_varnames)
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return out


def _names(func: Any) -> set[str]:
    """``code_names`` of a function, a static or class method ({} for what has no code)."""
    code = getattr(getattr(func, "__func__", func), "__code__", None)
    return set() if code is None else code_names(code)


def _where(cls: type, name: str) -> str:
    owner = next((k for k in cls.__mro__ if name in k.__dict__), None)
    return f"{owner.__qualname__ if owner else cls.__qualname__}.{name}"


def _calls(cls: type, caller: str, part: str) -> bool:
    """Whether ``cls``'s ``caller``, through its chain of super() calls, calls ``part``."""
    for k in cls.__mro__:
        if caller in k.__dict__:
            names = _names(k.__dict__[caller])
            if part in names:
                return True
            if "super" not in names:
                return False
    return False


def _taken_over(front: type, piece: type, part: str) -> bool:
    """Whether ``front`` is a piece that computes ``part`` itself for the pieces behind it (``Variant.takes_over``)
    and ``piece`` takes part through the part it names, which ``front`` calls (CrossQ's target and SAC's
    ``next_action``)."""
    for variant in registry.VARIANTS:
        if variant.piece is front:
            via = dict(variant.takes_over).get(part)
            if via is not None and via in piece.__dict__ \
                    and any(via in _names(f) for f in front.__dict__.values() if callable(f)):
                return True
    return False


@functools.cache
def problem(cls: type) -> str | None:
    """None when every active piece's parts run in an update of ``cls``; else one line naming both parts."""
    mro = cls.__mro__
    for variant in registry.VARIANTS:
        piece = variant.piece
        if piece not in mro:
            continue
        switch = variant.switch
        for part in (p for p in piece.__dict__ if p in registry.PARTS):  # nothing in front of it may cut it off
            for k in mro[:mro.index(piece)]:
                if part in k.__dict__ and "super" not in _names(k.__dict__[part]) and not _taken_over(k, piece, part):
                    return (f"{k.__qualname__}.{part} replaces {part} without calling super(), so {switch}'s "
                            f"{piece.__name__}.{part} ({registry.PARTS[part][1]}) never runs: call super().{part}(...) "
                            f"there, or turn {switch} off")
        for part in variant.needs:  # and each part it needs is called, up to learn_many
            child = part
            while child != "learn_many":
                caller = registry.PARTS[child][0]
                if not _calls(cls, caller, child):
                    return (f"{_where(cls, caller)} does not call {child}, so {switch}'s {piece.__name__} "
                            f"({registry.PARTS[part][1]}) never runs: call self.{child}(...) there, or turn {switch} off")
                child = caller
    return None


def _variant_classes(cls: type) -> list[type]:
    """The classes of ``ddpg.variants`` in ``cls``'s MRO in front of ``ddpg_agent.Agent``."""
    import ddpg_agent

    mro = cls.__mro__
    front = mro[:mro.index(ddpg_agent.Agent)] if ddpg_agent.Agent in mro else ()
    return [k for k in front if k.__module__.startswith("ddpg.variants.")]


def variant_parts(cls: type) -> dict[str, list[str]]:
    """The parts of the update and the constructors that ``cls``'s variants define, by file."""
    out: dict[str, list[str]] = {}
    for k in _variant_classes(cls):
        parts = [p for p in k.__dict__ if p in registry.PARTS]
        if parts:
            out.setdefault(f"ddpg/variants/{k.__module__.rsplit('.', 1)[-1]}.py", []).extend(parts)
    return out


__all__ = ["code_names", "problem", "variant_parts"]
