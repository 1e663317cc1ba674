#!/bin/sh
# Runs a scene's stand-in for the Unity binaries (reacher.standin, crawler.standin: each serves its
# scene through envkit/unity/standin.py) with this project's own Python, whatever venv the
# launching unityagents client runs in.
# Usage: standin.sh SCENE_MODULE [--num-agents N] [--port P] [Unity flags, ignored]
# Environment: REACHER_PYTHON overrides the interpreter (default: <project>/.venv/bin/python).
set -eu
# Resolve symlinks so a linked Reacher_Linux_NoVis/ folder still finds the project.
root=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
python=${REACHER_PYTHON:-$root/.venv/bin/python}
if [ ! -x "$python" ]; then
    echo "Reacher stand-in: no Python at $python; create the project venv first" \
         "(see README) or set REACHER_PYTHON" >&2
    exit 1
fi
# Nothing from the client's environment may shadow the project's packages (its protobuf 3,
# the 'tests' package unityagents installs, user site-packages) or slow our protobuf down.
unset PYTHONHOME PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION
PYTHONPATH=$root
PYTHONNOUSERSITE=1
export PYTHONPATH PYTHONNOUSERSITE
module=${1:?usage: standin.sh SCENE_MODULE (reacher.standin or crawler.standin) [options]}
shift
exec "$python" -m "$module" "$@"
