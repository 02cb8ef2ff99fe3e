# tests/gpu/gl_env.sh: sourced by the GPU-machine scripts (tests/gpu, bench): gl_env ROOT makes the Vulkan
# and EGL loaders usable there. The loaders are unpacked from ROOT/.gl/*.deb when the machine lacks them
# (tests/gpu/README.md says where the packages come from); and a driver installed under /usr/local/nvidia keeps
# its Vulkan ICD and EGL vendor files where the loaders do not look, so they are pointed there unless the
# caller already did. Always returns 0.
gl_env() {
    local root=${1:-.} nv=/usr/local/nvidia/share f
    if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1 ' && [ "$(id -u)" = 0 ]; then
        for f in "$root"/.gl/*.deb; do [ -e "$f" ] && dpkg -x "$f" /; done
        ldconfig 2>/dev/null
    fi
    [ -z "${VK_DRIVER_FILES:-}" ] && [ -e "$nv/vulkan/icd.d/nvidia_icd.json" ] &&
        export VK_DRIVER_FILES=$nv/vulkan/icd.d/nvidia_icd.json
    [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && [ -e "$nv/glvnd/egl_vendor.d/10_nvidia.json" ] &&
        export __EGL_VENDOR_LIBRARY_FILENAMES=$nv/glvnd/egl_vendor.d/10_nvidia.json
    return 0
}
