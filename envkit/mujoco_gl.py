"""The project loads MuJoCo through here: ``from envkit.mujoco_gl import mujoco``.

MuJoCo reads ``MUJOCO_GL`` once, when it is first imported, to choose how it renders. On a
machine without a display a headless backend (EGL, then OSMesa) must be chosen before that
(``envkit.display.pick_headless_gl``), so this module makes the choice and then loads MuJoCo:
whichever module of the project is imported first, the order is right. (A program that
imports ``mujoco`` itself before the project does must set ``MUJOCO_GL`` itself.)
"""

import numbers

from envkit.display import pick_headless_gl

pick_headless_gl()

import mujoco  # noqa: E402

__all__ = ["mujoco", "renderer_for"]

_NEEDS_GL = (
    "Rendering needs an OpenGL backend and none could be started ({error}). "
    "Headless, install EGL (Debian: apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1) "
    "or OSMesa (apt-get install libosmesa6) and set MUJOCO_GL=egl or MUJOCO_GL=osmesa "
    "before importing mujoco; `make run` installs them."
)


def renderer_for(model: "mujoco.MjModel", current: "mujoco.Renderer | None", width: object, height: object,
                 camera: str) -> "mujoco.Renderer":
    """The offscreen renderer an environment's ``render`` draws with: ``current`` when it already has
    this size, else a new one (the old one closed). Refuses, naming the expected form, a size beyond
    the model's offscreen buffer or a camera the model lacks, and says what to install when no
    OpenGL backend starts."""
    limits = {"width": model.vis.global_.offwidth, "height": model.vis.global_.offheight}
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 < value <= limits[name]:
            raise ValueError(f"render {name} must be an integer from 1 to {limits[name]} pixels, got {value!r}")
    names = sorted(model.camera(i).name for i in range(model.ncam))
    if camera not in names:
        quoted = [f"'{n}'" for n in names]
        listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
        raise ValueError(f"unknown camera {camera!r}: this scene has {listed}")
    if current is not None and (current.width, current.height) == (width, height):
        return current
    if current is not None:
        current.close()
    try:
        return mujoco.Renderer(model, height=height, width=width)
    except Exception as error:  # mujoco raises several types depending on the backend
        raise RuntimeError(_NEEDS_GL.format(error=error)) from error
