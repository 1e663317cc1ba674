"""Which OpenGL backend MuJoCo should use: a display if there really is one, else
headless EGL or OSMesa; and the largest frame a scene's offscreen buffer holds. Kept free of
mujoco imports: it must run before mujoco loads, and the commands read the buffer's size
(watch.py's --width/--height) without loading MuJoCo."""

import os
from ctypes.util import find_library

# Largest frame env.render() can draw (MuJoCo's offscreen buffer): every scene's MJCF declares it.
OFFSCREEN_WIDTH, OFFSCREEN_HEIGHT = 1920, 1080


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


__all__ = ["OFFSCREEN_HEIGHT", "OFFSCREEN_WIDTH", "pick_headless_gl", "x_display_reachable"]
