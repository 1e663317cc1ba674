#!/bin/sh
# Wheels for benchmarks/bench_gpu.py on a GPU machine without network (its docstring says how
# to install them there): mujoco, pinned as in requirements.txt, with its parts (mujoco-core,
# mujoco-studio) and the two packages it imports that a PyTorch image may lack (glfw, PyOpenGL). Run here, where pip reaches PyPI;
# PY picks the GPU machine's Python (default 3.12), for x86-64 Linux.
set -eu
PY=${PY:-3.12}
cd "$(dirname "$0")/.."
mujoco=$(grep '^mujoco==' requirements.txt)
version=${mujoco#mujoco==}  # mujoco-core and mujoco-studio come in the same version
mkdir -p .whl
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version "$PY" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "$mujoco" "mujoco-core==$version" "mujoco-studio==$version" glfw==2.11.0 PyOpenGL==3.1.10
ls .whl
