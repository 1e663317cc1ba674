"""Shared set-up for the test suite."""

# MuJoCo reads MUJOCO_GL when it is first imported, and some test modules import it directly:
# choose the headless OpenGL backend (when there is no display) before any is collected.
from reacher.display import pick_headless_gl

pick_headless_gl()


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "slow: takes tens of seconds; collected first, so that `make test`'s parallel workers "
                   "(pytest-xdist, one test file each at a time) do not end waiting on it")


def pytest_collection_modifyitems(config, items) -> None:
    """Put the files holding slow tests, and the notebooks, first (each file's tests in their own
    order, as are the rest's): xdist hands out whole files in collection order, and a long file
    taken last would leave the other workers idle while it runs."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow") or item.path.suffix == ".ipynb"}
    items.sort(key=lambda item: item.path not in slow_files)
