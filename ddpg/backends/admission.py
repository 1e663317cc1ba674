"""Admitting the fast paths only for the exact code they restate: a fingerprint of each part.

``fast_cpu.FastCPU`` (the update) and ``fast_steps.FastSteps`` (acting and storing) compute by hand
what some of the loaded code computes (``restated.PARTS``: the networks' forward passes and
constructors, the agent's update, its acting and storing, its constructor, where its optimisers are
made, the buffer's draws and writes, the noise, the n-step returns). Each may run only while each of
its parts is the code it was written from, so each part is fingerprinted and compared with the record
kept beside the fast learner (``fast_cpu_restates.json``):

* the fingerprint is taken from the objects the agent will actually call (its class's method, or an
  attribute set on the instance), so an edit of the file, a subclass and a monkeypatch all show;
* it is the function's syntax tree printed back (``ast.unparse``) without docstrings, so comments,
  docstrings and layout do not count; the networks' constructors are taken without their
  defaults: the widths written there are read from the networks built, which the fast learner takes;
* a setting the fast paths do not handle (not in ``restated.SETTINGS``: a new field, which the edited
  code may read anywhere) must be at its default, the value ``--write``'s check ran the code with;
* a function whose code in memory is not the one in its file (edited after import) does not pass;
* the library functions the parts call must be PyTorch's own (``guard.library_problem``), no module
  hook may be set, and torch's default dtype must be float32;
* the record holds a hash of the fast code's own files (``FAST_CODE``): a changed fast path with an
  old record is not admitted.

What differs is named in one line, and the readable code runs. An edit anywhere else (``model.py``'s
initialisation, a default setting) keeps the fast paths, which call that code as the readable
learner does. The update and the decisions are admitted apart: an edit of the noise keeps the fast
update and runs the edited noise. Admission is once, at attach; ``guard`` checks at every entry that
the agent still holds what was admitted.

The record is data: ``python -m ddpg.backends.admission --write`` remakes it from the code on disk,
and refuses unless the fast learner, run against the readable update from the committed checkpoints
over real transitions, agrees with it to float32 rounding (``proof.trajectory_differs``).
``tests/test_admission.py`` fails while the record and the code disagree.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import inspect
import json
import textwrap
import types
from dataclasses import fields
from pathlib import Path
from typing import Any

import torch

from ddpg.backends import restated
from ddpg.backends.guard import hooked, library_problem, optimizers_problem
from ddpg.backends.restated import RESTATER, UPDATE
from ddpg.variants.compose import code_names

RECORD = Path(__file__).with_name("fast_cpu_restates.json")
# The fast paths' own code: the record holds a hash of each file, so a changed fast path with an old record fails too.
FAST_CODE = ("fast_cpu.py", "passes.py", "flat.py", "fast_steps.py", "restated.py")
WRITE = "python -m ddpg.backends.admission --write"


class Differs(Exception):
    """A restated part that is not the code the fast learner was written from."""


def _strip_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]


def fingerprint(func: Any, label: str = "") -> str:
    """The function's code without docstrings and comments (and, for the networks' constructors,
    defaults), hashed. Differs when it cannot be read as the plain function it claims to be."""
    if isinstance(func, (staticmethod, classmethod)):
        func = func.__func__
    if not isinstance(func, types.FunctionType) or hasattr(func, "__wrapped__"):
        raise Differs(f"{label} is not a plain function ({type(func).__name__})")
    try:
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError) as exc:
        raise Differs(f"{label}'s source cannot be read ({exc})") from None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != func.__name__:
        raise Differs(f"{label} is not a function defined by def")
    _strip_docstrings(node)
    if label in restated.WITHOUT_DEFAULTS:
        node.args.defaults, node.args.kw_defaults = [], [None] * len(node.args.kwonlyargs)
    # The code in memory must be the one in the file (a file edited after import is not what runs).
    compiled = compile(ast.Module(body=[node], type_ignores=[]), "<admission>", "exec").co_consts
    code = next((c for c in compiled if isinstance(c, types.CodeType)), None)
    if code is None or code_names(code) != code_names(func.__code__):
        raise Differs(f"{label} in memory is not the code in its file (edited after import?)")
    return hashlib.sha256(ast.unparse(node).encode()).hexdigest()[:16]


def _data_only_pieces() -> tuple[type, ...]:
    from ddpg.variants import registry

    return tuple(v.piece for v in registry.VARIANTS if v.data_only)


def _called(obj: Any, name: str, label: str) -> Any:
    """What ``obj`` runs for ``name``: an attribute set on the instance, else the first definition
    in its class's MRO that is not a data-only variant's piece (those may only wrap a part, calling
    ``super()``); None where nothing defines it."""
    if name != "__init__" and name in getattr(obj, "__dict__", {}):
        return obj.__dict__[name]
    skip = _data_only_pieces()
    for cls in type(obj).__mro__:
        if name in cls.__dict__:
            if cls in skip:
                func = cls.__dict__[name]
                if "super" not in getattr(getattr(func, "__code__", None), "co_names", ()):
                    raise Differs(f"{label} is replaced by the data-only variant {cls.__name__}")
                continue
            return cls.__dict__[name]
    return None


def fingerprints(agent: Any, path: str = UPDATE) -> dict[str, str | None]:
    """Each part ``path`` restates (``restated.PARTS``), fingerprinted as the agent would run it (None:
    it has no such part; ``Differs`` for one that cannot be read)."""
    if type(agent.actor_target) is not type(agent.actor_local) or type(agent.critic_target) is not type(agent.critic_local):
        raise Differs("the target networks are not of the networks' own classes")
    out: dict[str, str | None] = {}
    for label, where in restated.parts(path).items():
        obj = getattr(agent, where) if where else agent
        func = _called(obj, label.split(".")[1], label)
        out[label] = None if func is None else fingerprint(func, label)
    return out


def source_fingerprints() -> dict[str, list[str | None]]:
    """For each restated part, the fingerprints of the code on disk that may run it: ``ddpg_agent.py``'s
    and ``model.py``'s, and for the update's parts of the agent ``variants.VariantAgent``'s with no
    update variant on (a data-only variant runs fast; the decisions run for ``Agent`` alone)."""
    import ddpg_agent
    import model
    from ddpg.variants.agent import VariantAgent

    classes = {"Actor": [model.Actor], "Critic": [model.Critic], "Agent": [ddpg_agent.Agent],
               "ReplayBuffer": [ddpg_agent.ReplayBuffer], "OUNoise": [ddpg_agent.OUNoise],
               "NStepReturns": [ddpg_agent.NStepReturns]}
    out: dict[str, list[str | None]] = {}
    for label, (_, paths) in restated.PARTS.items():
        owner, name = label.split(".")
        found = [fingerprint(cls.__dict__[name], label) if name in cls.__dict__ else None
                 for cls in classes[owner] + ([VariantAgent] if owner == "Agent" and UPDATE in paths else [])]
        out[label] = sorted(set(found) - {None}) + ([None] if owner == "Agent" and name not in ddpg_agent.Agent.__dict__
                                                   else [])
    return out


def fast_code_hashes() -> dict[str, str]:
    """A hash of each file of the fast paths' own code."""
    here = Path(__file__).parent
    return {name: hashlib.sha256((here / name).read_bytes()).hexdigest()[:16] for name in FAST_CODE}


def read_record(path: Path = RECORD) -> dict[str, Any]:
    return json.loads(path.read_text())


def _hooked(agent: Any) -> str | None:
    for net in ("actor_local", "critic_local", "actor_target", "critic_target"):
        found = hooked(getattr(agent, net), net)
        if found:
            return found
    return None


def stale(record: dict[str, Any]) -> str | None:
    """Why the record is not the code on disk (the restated parts, the config's fields, the fast code), or None."""
    edited = [label for label, now in source_fingerprints().items() if record.get("parts", {}).get(label) != now]
    if edited:
        return f"the code of {', '.join(edited[:4])}{', ...' if len(edited) > 4 else ''} differs from the record"
    changed = [name for name, digest in fast_code_hashes().items() if record.get("fast_code", {}).get(name) != digest]
    if changed:
        return f"the fast code ({', '.join(f'ddpg/backends/{name}' for name in changed)}) changed since the record"
    return None


def differences(agent: Any, record: dict[str, Any] | None = None, path: str = UPDATE) -> str | None:
    """None when every part ``path`` restates (UPDATE: the fast learner's; DECISIONS: acting and storing)
    is the code it was written from, the record is its fast code's, and the library functions are
    PyTorch's own; else what differs, in a few words. Never raises: anything unexpected is a difference."""
    try:
        record = read_record() if record is None else record
        changed = [name for name, digest in fast_code_hashes().items() if record.get("fast_code", {}).get(name) != digest]
        if changed:
            return (f"ddpg/backends/{changed[0]} is not the fast code its record was checked for "
                    f"({WRITE} checks and records it)")
        known = set(restated.SETTINGS)
        import ddpg_agent
        from ddpg.variants.config import VariantConfig  # its fields are off here: fast_cpu.supports rules variants out

        variant_fields = {f.name for f in fields(VariantConfig)} - {f.name for f in fields(ddpg_agent.DDPGConfig)}
        unknown = [f"{f.name} = {getattr(agent.config, f.name)!r} (its default {f.default!r})" for f in fields(agent.config)
                   if f.name not in known and f.name not in variant_fields and getattr(agent.config, f.name) != f.default]
        if unknown:
            return f"the setting{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}, which {RESTATER[path]} does not know"
        got = fingerprints(agent, path)
        edited = [label for label in got if got[label] not in record["parts"].get(label, [])]
        if edited:
            where = sorted({restated.FILES[label.split(".")[0]] for label in edited})
            return (f"your code of {', '.join(edited[:4])}{', ...' if len(edited) > 4 else ''} "
                    f"(in {' or '.join(where)}, a subclass or a patch) is not what {RESTATER[path]} restates")
        libraries = restated.library(got)
        return (optimizers_problem(agent) if path == UPDATE else None) or _hooked(agent) or library_problem(libraries) or (
            None if torch.get_default_dtype() is torch.float32 else f"torch's default dtype is {torch.get_default_dtype()}")
    except Differs as exc:
        return str(exc)
    except Exception as exc:  # the check must never stop a run: anything odd runs the readable learner
        return f"the admission check could not read the agent ({type(exc).__name__}: {exc})"


def write_record(path: Path | None = None) -> dict[str, Any]:
    """Record the code on disk as the code the fast paths restate, after checking that they compute it:
    ``proof.trajectory_differs`` runs the fast learner and the readable update from the committed
    checkpoints over real transitions. ValueError, naming what parts, when they do not agree."""
    from ddpg.backends.proof import trajectory_differs

    differs = trajectory_differs()
    if differs is not None:
        raise ValueError(f"the fast learner does not compute the code on disk ({differs}): change "
                         "ddpg/backends/fast_cpu.py to restate it before recording it, or run the readable learner")
    record = {"what": "fingerprints of the code ddpg/backends/fast_cpu.py and fast_steps.py restate, by part "
                      f"(restated.PARTS), and a hash of the fast code's own files ({WRITE})",
              "parts": source_fingerprints(), "fast_code": fast_code_hashes()}
    (path or RECORD).write_text(json.dumps(record, indent=1) + "\n")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description="Compare (or, with --write, check and remake) the record "
                                     "of the code the fast learner restates with ddpg_agent.py, model.py and the fast code on disk.")
    parser.add_argument("--write", action="store_true", help="run the fast learner against the readable update from the "
                        "committed checkpoints, and remake the record from the code on disk only where they agree")
    args = parser.parse_args(argv)
    if args.write:
        try:
            write_record()
        except ValueError as exc:
            print(f"Not written: {exc}")
            return 1
        print(f"Wrote {RECORD}")
        return 0
    why = stale(read_record())
    if why:
        print(f"The fast learner's record differs from the code on disk: {why}. Once ddpg/backends/fast_cpu.py restates it, "
              f"{WRITE} checks the fast learner against the readable update and remakes the record")
        return 1
    print("The fast learner's record matches ddpg_agent.py, model.py and the fast code")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
