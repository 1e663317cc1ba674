#!/bin/sh
# `make unity`: install the genuine unityagents 0.4.0 client into its own venv,
# .venv-unity, so old notebooks and scripts can run unchanged against the stand-in
# executables (Reacher_Linux_NoVis/Reacher.x86_64 and friends).
# Why its own venv: it needs numpy<2 and protobuf 3.20.3, while the project pins numpy 2
# and protobuf 7, and its wheel installs a top-level `tests` package. Versions are pinned
# like requirements.txt.
# Why --no-deps: its declared pins (grpcio 1.11, protobuf 3.5.2, tensorflow 1.7.1) cannot
# be installed on Python 3.11, and it only imports numpy, Pillow, grpc and protobuf.
# The stand-ins themselves run on the project's .venv, so that must exist too.
# Usage: envkit/unity/setup.sh [python3]   (run from anywhere)
set -eu
root=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
python=${1:-python3}
venv=$root/.venv-unity
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet "numpy==1.26.4" "pillow==13.0.0" "grpcio==1.85.1" "protobuf==3.20.3"
"$venv/bin/python" -m pip install --quiet --no-deps "unityagents==0.4.0"
"$venv/bin/python" -W ignore -c "import unityagents, numpy, google.protobuf as p; \
print('unityagents client ready in .venv-unity (numpy', numpy.__version__ + ', protobuf', p.__version__ + ')')"
chmod +x "$root/envkit/unity/standin.sh" "$root"/Reacher_*/*.x86_64 "$root"/Crawler_*/*.x86_64
if [ ! -x "$root/.venv/bin/python" ]; then
    echo "note: the stand-ins run on the project venv $root/.venv, which is missing" >&2
fi
