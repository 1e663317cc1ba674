"""The project loads MuJoCo through here: ``from reacher.mujoco_gl import mujoco``.

MuJoCo reads ``MUJOCO_GL`` once, when it is first imported, to choose how it renders. On a
machine without a display a headless backend (EGL, then OSMesa) must be chosen before that
(``reacher.display.pick_headless_gl``), so this module makes the choice and then loads MuJoCo:
whichever module of the project is imported first, the order is right. (A program that
imports ``mujoco`` itself before the project does must set ``MUJOCO_GL`` itself.)
"""

from reacher.display import pick_headless_gl

pick_headless_gl()

import mujoco  # noqa: E402

__all__ = ["mujoco"]
