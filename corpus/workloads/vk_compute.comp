// vk_compute.comp - compute shader of the vk_compute workload.
// Each invocation i < n writes data[i] = mix(i, seed); the host recomputes the same function.
#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform PC { uint n; uint seed; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) {
        uint v = i * 2654435761u ^ pc.seed;
        v ^= v >> 13;
        data[i] = v * 5u + 1u;
    }
}
