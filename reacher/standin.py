"""The Reacher's stand-in for the course's Unity binaries: `Reacher_Linux*/Reacher.x86_64` run
`python -m reacher.standin` (through envkit/unity/standin.sh), which serves the built-in Reacher, 20
arms as the course's build has (the binaries pass 1 for the one-arm build), to the genuine
unityagents 0.4 client."""

from __future__ import annotations

import sys

from envkit.unity.standin import Scene, main
from reacher.environment import ReacherEnvironment

SCENE = Scene("Reacher", ReacherEnvironment, 20)

if __name__ == "__main__":
    sys.exit(main(SCENE))
