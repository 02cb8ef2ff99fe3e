// vk_nostore_discard.frag - a fragment shader that discards every fragment: the draw stores nothing.
#version 450
layout(location = 0) in vec3 color;
layout(location = 0) out vec4 frag;
void main()
{
    discard;
}
