// vk_scene.vert - one textured quad per draw: a unit quad (indexed, from the vertex buffer) placed by push
// constants in pixel units on the 256x256 target, at a constant depth.
#version 450
layout(location = 0) in vec2 pos;   // unit quad corner, (0,0) .. (1,1)
layout(location = 1) in vec2 uv;
layout(push_constant) uniform Object {
    vec4 rect;    // x0, y0, width, height in pixels (row 0 at the top)
    float depth;  // NDC z in [0, 1]
} obj;
layout(location = 0) out vec2 tc;
void main()
{
    vec2 p = obj.rect.xy + pos * obj.rect.zw;
    gl_Position = vec4(p / 128.0 - 1.0, obj.depth, 1.0);
    tc = uv;
}
