// vk_scene.frag - nearest-sampled texel times the object's tint (a dynamic uniform buffer offset per draw).
#version 450
layout(set = 0, binding = 0) uniform sampler2D tex;
layout(set = 0, binding = 1) uniform Tint { vec4 tint; } u;
layout(location = 0) in vec2 tc;
layout(location = 0) out vec4 frag;
void main() { frag = texture(tex, tc) * u.tint; }
