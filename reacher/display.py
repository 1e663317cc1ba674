"""Which OpenGL backend MuJoCo should use: a display if there really is one, else
headless EGL or OSMesa. Kept free of mujoco imports: it must run before mujoco loads."""

import os
from ctypes.util import find_library


def x_display_reachable() -> bool:
    """DISPLAY can be set with no X server behind it (a stale ssh or container
    variable): for a local display, look for its socket."""
    display = os.environ.get("DISPLAY", "")
    if not display:
        return False
    host, _, number = display.partition(":")
    if host not in ("", "unix"):
        return True  # a remote display: trust it
    return os.path.exists(f"/tmp/.X11-unix/X{number.split('.')[0]}")


def pick_headless_gl() -> None:
    """MuJoCo reads MUJOCO_GL when it is first imported: on a machine without a
    display, choose a headless backend that is installed (EGL, then OSMesa)."""
    if "MUJOCO_GL" in os.environ or os.environ.get("WAYLAND_DISPLAY") or x_display_reachable():
        return
    if find_library("EGL"):
        os.environ["MUJOCO_GL"] = "egl"
    elif find_library("OSMesa"):
        os.environ["MUJOCO_GL"] = "osmesa"
