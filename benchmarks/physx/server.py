"""Python client of the PhysX 4.1 Crawler reference's closed-loop mode (`crawler_physx --serve`).

benchmarks/physx/crawler_physx.cpp builds the Crawler in PhysX the way Unity 2018 builds it; with
`--serve --agents N` it holds N crawlers in one scene and answers a binary protocol on its
stdin/stdout, so that a policy written in Python (a trained actor, say) can be played in PhysX as
in the built-in MuJoCo Crawler, and the two compared on the same actions. The replies are
crawler/mjcf.py's sensor rows (SENSOR_SLICES, 117 values), the rows crawler/environment.py turns
into rewards, contacts and observations, so the same Python code can read either side.

Protocol (little-endian float64; the reference flushes after each reply):
    'R' + N bytes (1: restart that crawler)  ->  N x 117: every crawler's sensor row now
    'S' + N x 20 actions                     ->  N x 6 x 117: each crawler's rows before each of
                                                 the decision's 5 physics steps, then after it
    'G'                                      ->  N x 9 x 13: every part's pose and velocities
    'P' + N x 9 x 13 (as 'G' gives them)     ->  N x 117, the crawlers put in that state
    'Q'                                      ->  the process exits 0
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import numpy as np

SENSOR_SIZE = 117  # crawler/mjcf.py SENSOR_SIZE (the reference writes the same layout)
# The readings of what Unity's closed engine leaves open under which the genuine-trained SAC walks
# as on the genuine build (docs/crawler.md, "Against the genuine build"): the hip's target as Unity
# computes it, the prefab's locked axes locked under PhysX's twist and swing drives, and Unity's
# contact offset on every collider, the ground's too.
KEPT_READINGS = ("--hip-y-sign", "plus", "--locked", "locked-twist-swing", "--contact-offset", "0.01")
ACTION_SIZE = 20
PHYSICS_STEPS = 5  # per decision (numberOfActionsBetweenDecisions)
_STDERR_KEEP = 1 << 16  # characters of the reference's stderr kept for error messages
_BUILD_HINT = "build it with `bash benchmarks/physx/build.sh PHYSX_GIT_DIR` (PHYSX_WORK, default /tmp/physx, holds the binary)"


class PhysXServerError(RuntimeError):
    """The reference process died or broke the protocol; the message carries its stderr."""


class PhysXCrawlers:
    """N crawlers in one PhysX 4.1 scene, stepped by `crawler_physx --serve` in a child process.

    `options` are the reference's readings of what Unity's closed engine leaves open (for example
    `("--hip-y-sign", "plus", "--drive-limits", "impulse")`; crawler_physx.cpp's header lists them):
    passed through, so a comparison can try each reading without rebuilding.
    """

    def __init__(self, binary: str | Path, num_agents: int, options: Sequence[str] = ()) -> None:
        path = Path(binary)
        if not path.is_file():
            raise FileNotFoundError(f"the PhysX Crawler reference {path} does not exist: {_BUILD_HINT}")
        if int(num_agents) < 1:
            raise ValueError(f"num_agents must be at least 1, got {num_agents}")
        self.num_agents = int(num_agents)
        self.command = [str(path), "--serve", "--agents", str(self.num_agents), *map(str, options)]
        self._stderr: list[str] = []
        self._proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, bufsize=0)
        # PhysX may warn every step: drained on a thread, a full stderr pipe cannot block the process.
        self._drain = threading.Thread(target=self._read_stderr, name="physx-stderr", daemon=True)
        self._drain.start()

    # ------------------------------------------------------------------ protocol
    def restart(self, mask: np.ndarray) -> np.ndarray:
        """Restart the crawlers where mask (n,) is true to their first pose at rest (their drives
        keep their last settings, as Unity's BodyPart.Reset leaves them); every crawler's sensor
        row (n, 117) after it."""
        flags = np.asarray(mask, dtype=bool)
        if flags.shape != (self.num_agents,):
            raise ValueError(f"mask must have shape ({self.num_agents},), got {flags.shape}")
        self._send(b"R" + flags.astype(np.uint8).tobytes())
        return self._receive((self.num_agents, SENSOR_SIZE))

    def step(self, actions: np.ndarray) -> np.ndarray:
        """One decision: every crawler's drives from its action (n, 20), then 5 physics steps; the
        sensor rows (n, 6, 117) before each physics step and after the last, as
        crawler/environment.py records them."""
        a = np.asarray(actions, dtype=np.float64)
        if a.shape != (self.num_agents, ACTION_SIZE):
            raise ValueError(f"actions must have shape ({self.num_agents}, {ACTION_SIZE}), got {a.shape}")
        if not np.isfinite(a).all():
            raise ValueError("actions must be finite: PhysX would carry a NaN into the whole scene")
        self._send(b"S" + a.astype("<f8").tobytes())
        return self._receive((self.num_agents, PHYSICS_STEPS + 1, SENSOR_SIZE))

    def state(self) -> np.ndarray:
        """Every crawler's parts (n, 9, 13): position, rotation (x, y, z, w), velocity and angular
        velocity, in PARTS' order: all a later step reads but PhysX's caches (contact manifolds,
        friction anchors), which a scene put in this state rebuilds, so it goes on close to, not
        bitwise as, the scene it came from."""
        self._send(b"G")
        return self._receive((self.num_agents, 9, 13))

    def set_state(self, state: np.ndarray) -> np.ndarray:
        """Put every crawler in a `state()`; their sensor rows (n, 117) after it."""
        s = np.asarray(state, dtype=np.float64)
        if s.shape != (self.num_agents, 9, 13) or not np.isfinite(s).all():
            raise ValueError(f"a state is {self.num_agents} x 9 x 13 finite values (state() gives one), got {s.shape}")
        self._send(b"P" + s.astype("<f8").tobytes())
        return self._receive((self.num_agents, SENSOR_SIZE))

    def close(self) -> None:
        """Ask the process to exit ('Q'), and end it if it does not within 10 s."""
        proc = self._proc
        if proc.poll() is None:
            try:
                assert proc.stdin is not None
                proc.stdin.write(b"Q")
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()
        self._drain.join(timeout=5)

    @property
    def stderr(self) -> str:
        """What the process wrote to stderr so far (PhysX's warnings: one is a sign of a setup
        PhysX does not simulate as asked)."""
        return "".join(self._stderr)

    def __enter__(self) -> PhysXCrawlers:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # ------------------------------------------------------------------ internals
    def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        kept = 0
        for line in iter(self._proc.stderr.readline, b""):
            text = line.decode(errors="replace")
            if kept < _STDERR_KEEP:
                self._stderr.append(text)
                kept += len(text)
        self._proc.stderr.close()

    def _died(self, what: str) -> PhysXServerError:
        try:
            code = self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            code = self._proc.wait()
        self._drain.join(timeout=5)
        err = self.stderr.strip() or "(nothing on stderr)"
        return PhysXServerError(f"{' '.join(self.command)}: {what}; exit status {code}; stderr:\n{err}")

    def _send(self, message: bytes) -> None:
        if self._proc.poll() is not None:
            raise self._died("the process is not running")
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(message)
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError) as e:  # ValueError: closed by close()
            raise self._died(f"could not send a request ({e})") from e

    def _receive(self, shape: tuple[int, ...]) -> np.ndarray:
        assert self._proc.stdout is not None
        size = int(np.prod(shape)) * 8
        chunks, got = [], 0
        while got < size:  # an unbuffered pipe returns what has arrived so far
            chunk = self._proc.stdout.read(size - got)
            if not chunk:
                raise self._died(f"the reply ended after {got} of {size} bytes")
            chunks.append(chunk)
            got += len(chunk)
        return np.frombuffer(b"".join(chunks), dtype="<f8").astype(np.float64).reshape(shape)


__all__ = ["ACTION_SIZE", "PHYSICS_STEPS", "SENSOR_SIZE", "PhysXCrawlers", "PhysXServerError"]
