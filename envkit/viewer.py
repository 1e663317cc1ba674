"""The live window a scene opens on ``reset(train_mode=False)``, as the original's Unity window showed
the agents outside train mode: MuJoCo's passive viewer on the scene's fixed camera, kept at real time.

One class for every scene, so each opens, paces and closes its window the same way. Nothing here
imports MuJoCo until a window opens (the commands import this for ``join_viewer_threads``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from envkit.display import x_display_reachable


def join_viewer_threads(timeout: float = 5.0) -> None:
    """Wait for MuJoCo's passive-viewer drawing threads to end: closing a viewer only asks its thread
    to stop, and a process that exits while it still draws crashes (GLXBadDrawable). Python names the
    thread after its target, which is how it is found."""
    for thread in threading.enumerate():
        if "_launch_internal" in thread.name and thread is not threading.current_thread():
            thread.join(timeout=timeout)


class LiveViewer:
    """A scene's live window: ``open`` it on a desktop, ``sync`` it after every decision, ``close`` it.

    ``scene`` names the scene in the message printed when no window can open; ``camera`` is the
    model's fixed camera the window looks through; ``decision_seconds`` is one decision's simulated
    time, so the window shows the agents at the original's real-time pace. ``show=False`` (the
    constructor's ``show_viewer``) never opens one.
    """

    def __init__(self, scene: str, camera: str, decision_seconds: float, show: bool = True) -> None:
        self.scene = scene
        self.camera = camera
        self.decision_seconds = decision_seconds
        self.show = show
        self.window: Any = None  # MuJoCo's passive viewer handle while open
        self._next_frame_time = 0.0

    @property
    def is_open(self) -> bool:
        """Whether a window is open (it may since have been closed by its user: ``is_running``)."""
        return self.window is not None

    def is_running(self) -> bool:
        """Whether the window is open and its user has not closed it."""
        return self.window is not None and self.window.is_running()

    def open(self, model: Any, data: Any) -> None:
        """Show ``model`` and ``data`` live, unless one is open already, the scene asked for none or no
        display is reachable; when a window cannot start, say so once and keep running without it."""
        if self.window is not None or not self.show or not x_display_reachable():
            return
        try:
            import mujoco.viewer

            self.window = mujoco.viewer.launch_passive(model, data, show_left_ui=False, show_right_ui=False)
            self.window.cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
            self.window.cam.fixedcamid = model.camera(self.camera).id
            self._next_frame_time = time.perf_counter()
        except Exception as error:  # no usable display: keep running without a window
            print(f"{self.scene}: no interactive viewer ({error}); use env.render() for frames")
            self.window = None

    def sync(self, prepare: Callable[[], object]) -> None:
        """After a decision: ``prepare`` brings the shown data up to date, the window draws it, and this
        waits out the rest of the decision's simulated time (real time, as the original's window ran
        outside train mode). A window its user closed is closed here."""
        if self.window is None:
            return
        if self.window.is_running():
            prepare()
            self.window.sync()
            wait = self._next_frame_time - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            self._next_frame_time = max(self._next_frame_time, time.perf_counter()) + self.decision_seconds
        else:
            self.close()

    def close(self) -> None:
        """Close the window and wait for its drawing thread (``join_viewer_threads``)."""
        if self.window is None:
            return
        self.window.close()
        self.window = None
        join_viewer_threads()


__all__ = ["LiveViewer", "join_viewer_threads"]
