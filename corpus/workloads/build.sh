#!/bin/sh
# build.sh - builds the vgtrace corpus workloads into OUTDIR (torch_small.py and triton_small.py are scripts:
# they run with a Python that has PyTorch and Triton; multi_kernel, in corpus/ too, is also recorded and replayed by
# tests/gpu/synth_lane.sh through the synth lane).
#   usage: corpus/workloads/build.sh OUTDIR            build the binaries
#          corpus/workloads/build.sh --shaders         regenerate the SPIR-V headers from the GLSL (glslangValidator)
# Needs: nvcc (CUDA 13.0: sm_90 SASS + compute_90 PTX, cudart linked statically), gcc, the Vulkan / EGL / GLES
# headers and link stubs (Debian: libvulkan-dev libegl-dev libgles-dev). Override with NVCC=, CC=.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" = "--shaders" ]; then
    cd "$here"
    glslangValidator -V --vn vk_compute_spv -o vk_compute_spv.h vk_compute.comp
    glslangValidator -V --vn vk_triangle_vert_spv -o vk_triangle_vert_spv.h vk_triangle.vert
    glslangValidator -V --vn vk_triangle_frag_spv -o vk_triangle_frag_spv.h vk_triangle.frag
    glslangValidator -V --vn vk_nostore_discard_frag_spv -o vk_nostore_discard_frag_spv.h vk_nostore_discard.frag
    glslangValidator -V --vn vk_scene_vert_spv -o vk_scene_vert_spv.h vk_scene.vert
    glslangValidator -V --vn vk_scene_frag_spv -o vk_scene_frag_spv.h vk_scene.frag
    exit 0
fi
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR | --shaders" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
NVCC=${NVCC:-nvcc}
CC=${CC:-gcc}
NVFLAGS="-O2 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 -I$here"
CFLAGS="-O2 -std=c11 -Wall -Wextra -I$here"

for w in vadd many_launches streams_threads cuda_graph cuda_graph_memcpy multi_kernel; do
    echo "nvcc $w"
    $NVCC $NVFLAGS -o "$out/$w" "$here/$w.cu"
done
echo "cc vk_compute";  $CC $CFLAGS -o "$out/vk_compute"  "$here/vk_compute.c"  -lvulkan
echo "cc vk_triangle"; $CC $CFLAGS -o "$out/vk_triangle" "$here/vk_triangle.c" -lvulkan
echo "cc gl_egl";      $CC $CFLAGS -o "$out/gl_egl"      "$here/gl_egl.c"      -lEGL -lGLESv2
echo "cc vk_nostore";  $CC $CFLAGS -o "$out/vk_nostore"  "$here/vk_nostore.c"  -lvulkan
echo "cc gl_nostore";  $CC $CFLAGS -o "$out/gl_nostore"  "$here/gl_nostore.c"  -lEGL -lGLESv2
echo "cc vk_scene";    $CC $CFLAGS -o "$out/vk_scene"    "$here/vk_scene.c"    -lvulkan -lm
echo "cc vk_blcopy";   $CC $CFLAGS -o "$out/vk_blcopy"   "$here/vk_blcopy.c"   -lvulkan
echo "built into $out"
