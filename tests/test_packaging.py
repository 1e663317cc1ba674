"""What `pip install .` installs: the product (the course's top-level files and the packages they
import), not the benchmarks, which run from the repository's root."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parent.parent


def _installed() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return set(find_packages(ROOT, include=config["packages"]["find"]["include"]))


def test_the_product_is_installed_and_the_benchmarks_are_not() -> None:
    packages = _installed()
    assert not any(p == "benchmarks" or p.startswith("benchmarks.") for p in packages)
    tops = {p.split(".")[0] for p in packages}
    assert {"ddpg", "crawler", "reacher", "envkit"} <= tops


def test_every_package_the_product_imports_is_installed() -> None:
    """Each folder of Python code that a top-level course file or a product package lives in is
    installed, subpackages included (a package left out would import only from the root)."""
    packages = _installed()
    for top in ("ddpg", "crawler", "reacher", "envkit"):
        for init in (ROOT / top).rglob("__init__.py"):
            name = ".".join(init.parent.relative_to(ROOT).parts)
            assert name in packages, f"{name} is not installed"
