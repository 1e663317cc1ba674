#!/bin/bash
# Builds PhysX 4.1.2 (static, release) and benchmarks/physx/crawler_physx, offline, with -j2.
# Usage: bash benchmarks/physx/build.sh PHYSX_GIT_DIR
#   PHYSX_GIT_DIR: a clone (or bare mirror) of github.com/NVIDIAGameWorks/PhysX at 4.1.2.
#   PHYSX_WORK (default /tmp/physx) holds the sources, the build and the binary.
# Then: $PHYSX_WORK/crawler_physx --episodes 40 > tests/physx_reference/crawler_physx_4_1.txt
# Closed loop: $PHYSX_WORK/crawler_physx --serve --agents N, played from Python by
# benchmarks/physx/server.py (tests/test_physx_server.py finds it at $CRAWLER_PHYSX).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
git_dir=${1:?usage: bash benchmarks/physx/build.sh PHYSX_GIT_DIR}
work=${PHYSX_WORK:-/tmp/physx}
src=$work/src
if [ ! -f "$src/physx/include/PxPhysicsAPI.h" ]; then
    # File by file: a mirror may lack a few large binary blobs (GPU libraries, sample media) that
    # `git archive` would stop at, and the build needs none of them.
    mkdir -p "$src"
    git --git-dir="$git_dir" ls-tree -r HEAD physx pxshared externals/cmakemodules | while read -r _ type sha path; do
        [ "$type" = blob ] || continue
        mkdir -p "$src/$(dirname "$path")"
        git --git-dir="$git_dir" cat-file blob "$sha" > "$src/$path" 2>/dev/null || rm -f "$src/$path"
    done
fi
# gcc 12 warns where the 2019 sources expected none: keep the warnings, drop -Werror.
sed -i 's/-Wall -Werror /-Wall /; s/-Wall -Wextra -Werror /-Wall -Wextra /' "$src/physx/source/compiler/cmake/linux/CMakeLists.txt"
mkdir -p "$work/build" && cd "$work/build"
cmake "$src/physx/compiler/public" -G "Unix Makefiles" --no-warn-unused-cli \
    -DCMAKEMODULES_PATH="$src/externals/cmakemodules" -DCMAKEMODULES_NAME=CMakeModules -DCMAKEMODULES_VERSION=1.27 \
    -DPHYSX_ROOT_DIR="$src/physx" -DPXSHARED_PATH="$src/pxshared" -DPXSHARED_INSTALL_PREFIX="$work/install/PxShared" \
    -DCMAKE_INSTALL_PREFIX="$work/install/PhysX" -DTARGET_BUILD_PLATFORM=linux -DPX_OUTPUT_ARCH=x86 \
    -DCMAKE_BUILD_TYPE=release -DPX_OUTPUT_LIB_DIR="$work/out" -DPX_OUTPUT_BIN_DIR="$work/out" \
    -DPX_BUILDSNIPPETS=OFF -DPX_BUILDPUBLICSAMPLES=OFF -DPX_GENERATE_STATIC_LIBRARIES=ON \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ > /dev/null
make -j2 PhysXFoundation PhysXCommon PhysX PhysXPvdSDK PhysXExtensions
libs=$(dirname "$(find "$work/out" -name 'libPhysX_static*.a' | head -1)")
g++ -O2 -std=c++14 -fno-rtti -DNDEBUG -I"$src/physx/include" -I"$src/pxshared/include" \
    "$here/crawler_physx.cpp" -o "$work/crawler_physx" -L"$libs" -Wl,--start-group -lPhysXExtensions_static_64 \
    -lPhysX_static_64 -lPhysXPvdSDK_static_64 -lPhysXCommon_static_64 -lPhysXFoundation_static_64 -Wl,--end-group \
    -lpthread -ldl
echo "built $work/crawler_physx"
