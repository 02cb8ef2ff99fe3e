/* vk_scene.c - vgtrace corpus workload: a small Vulkan renderer, the kind of command stream a real one sends.
 * A 256x256 R8G8B8A8_UNORM colour target with a D32_SFLOAT (else D16_UNORM) depth attachment, depth test
 * LESS with writes; one unit quad in a vertex buffer drawn with vkCmdDrawIndexed from a 16-bit index buffer;
 * an 8x8 texture (uploaded through a staging buffer) sampled with a nearest, clamp-to-edge combined image
 * sampler; per draw, push constants place the quad (pixel rectangle and depth) and a dynamic uniform-buffer
 * offset picks its tint. Two frames, each its own submission: clear, four overlapping quads (some hidden by
 * the depth test), copy to a host-visible buffer. Shaders: vk_scene.vert/.frag (SPIR-V in vk_scene_*_spv.h).
 * Every quad's edges lie on pixel boundaries and every texel covers whole pixels, so the image is exactly
 * predictable: the program renders the same two frames on the CPU and compares them pixel by pixel
 * (a colour may differ by at most 2 per channel: rounding of texel * tint to 8 bits).
 * Prints: INFO line (device, depth format), one INFO line per frame, then
 *   RESULT vk_scene ok 256x256 frames=2 draws=8 covered=<frame 0>,<frame 1> maxdiff=<n> hash=<fnv1a64 of both frames>
 * and writes the last frame as a PNG to argv[1] (default vk_scene.png); exit 0. On a difference from the CPU
 * reference it still writes the PNG, prints FAIL (with the hash) on stderr and exits 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <vulkan/vulkan.h>
#include "wl_common.h"
#include "vk_scene_vert_spv.h"
#include "vk_scene_frag_spv.h"

#define W 256u
#define H 256u
#define TEX 8u          /* texture is TEX x TEX texels */
#define NOBJ 4u         /* draws per frame */
#define NFRAMES 2u
#define TOLERANCE 2     /* per colour channel, against the CPU reference */

#define VK(x) do { VkResult r_ = (x); if (r_ != VK_SUCCESS) { \
    fprintf(stderr, "FAIL vk_scene: %s returned %d (%s:%d)\n", #x, (int)r_, __FILE__, __LINE__); \
    exit(1); } } while (0)

static void fail(const char *msg) { fprintf(stderr, "FAIL vk_scene: %s\n", msg); exit(1); }

/* The scene. Rectangles are in pixels (row 0 at the top), multiples of TEX wide and high so that texel
 * boundaries fall on pixel boundaries; depths are exact binary fractions. Draw order is the array order:
 * B lands in front of A, C behind both, D in front of A and C. */
typedef struct { float rect[4]; float depth; } object_pc;  /* the vertex shader's push constants */
static const object_pc scene[NFRAMES][NOBJ] = {
    { { { 24, 24, 128, 128 }, 0.5f }, { { 88, 72, 96, 96 }, 0.25f }, { { 40, 120, 160, 64 }, 0.75f },
      { { 160, 24, 72, 200 }, 0.375f } },
    { { { 40, 32, 128, 128 }, 0.5f }, { { 72, 96, 96, 96 }, 0.25f }, { { 24, 152, 160, 64 }, 0.75f },
      { { 168, 16, 72, 200 }, 0.375f } },
};
static const float tints[NOBJ][4] = { { 1, 1, 1, 1 }, { 1, 0.5f, 0.25f, 1 }, { 0.5f, 1, 0.5f, 1 }, { 0.25f, 0.5f, 1, 1 } };
static const unsigned char clear_rgba[4] = { 32, 32, 64, 255 };

static void texel(uint32_t i, uint32_t j, unsigned char out[4])  /* column i, row j */
{
    out[0] = (unsigned char)(16 + 32 * i);
    out[1] = (unsigned char)(16 + 32 * j);
    out[2] = ((i ^ j) & 1) ? 255 : 0;
    out[3] = 255;
}

/* The CPU reference of one frame: pixel centres inside a rectangle are covered, depth test LESS against a
 * cleared 1.0, nearest texel at the centre's texture coordinate, times the tint, rounded to 8 bits. */
static void reference_frame(uint32_t f, unsigned char *rgba)
{
    static float depth[W * H];
    for (uint32_t p = 0; p < W * H; p++) { memcpy(rgba + p * 4, clear_rgba, 4); depth[p] = 1.0f; }
    for (uint32_t o = 0; o < NOBJ; o++) {
        const object_pc *ob = &scene[f][o];
        uint32_t x0 = (uint32_t)ob->rect[0], y0 = (uint32_t)ob->rect[1];
        uint32_t w = (uint32_t)ob->rect[2], h = (uint32_t)ob->rect[3];
        for (uint32_t y = y0; y < y0 + h; y++)
            for (uint32_t x = x0; x < x0 + w; x++) {
                uint32_t p = y * W + x;
                if (!(ob->depth < depth[p])) continue;
                depth[p] = ob->depth;
                /* u = (x - x0 + 0.5) / w, texel column floor(u * TEX), in integers */
                uint32_t i = ((2 * (x - x0) + 1) * TEX) / (2 * w), j = ((2 * (y - y0) + 1) * TEX) / (2 * h);
                unsigned char t[4];
                texel(i, j, t);
                for (int c = 0; c < 4; c++) rgba[p * 4 + c] = (unsigned char)lrintf((float)t[c] * tints[o][c]);
            }
    }
}

static uint32_t find_mem(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp->memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
}

static VkDeviceMemory alloc_bind(VkDevice dev, const VkPhysicalDeviceMemoryProperties *mp,
                                 const VkMemoryRequirements *mr, VkMemoryPropertyFlags want, int fallback_any)
{
    uint32_t mt = find_mem(mp, mr->memoryTypeBits, want);
    if (mt == UINT32_MAX && fallback_any) mt = find_mem(mp, mr->memoryTypeBits, 0);
    if (mt == UINT32_MAX) fail("no suitable memory type");
    VkMemoryAllocateInfo mai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr->size, mt };
    VkDeviceMemory mem;
    VK(vkAllocateMemory(dev, &mai, NULL, &mem));
    return mem;
}

/* A host-visible, coherent buffer, mapped when map is not NULL. */
static VkBuffer make_buffer(VkDevice dev, const VkPhysicalDeviceMemoryProperties *mp, VkDeviceSize size,
                            VkBufferUsageFlags usage, VkDeviceMemory *mem, void **map)
{
    VkBufferCreateInfo bci = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, size, usage,
                               VK_SHARING_MODE_EXCLUSIVE, 0, NULL };
    VkBuffer buf;
    VK(vkCreateBuffer(dev, &bci, NULL, &buf));
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(dev, buf, &mr);
    *mem = alloc_bind(dev, mp, &mr, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
    VK(vkBindBufferMemory(dev, buf, *mem, 0));
    if (map) VK(vkMapMemory(dev, *mem, 0, VK_WHOLE_SIZE, 0, map));
    return buf;
}

/* A device-local, optimal-tiled 2D image and its view. */
static VkImage make_image(VkDevice dev, const VkPhysicalDeviceMemoryProperties *mp, VkFormat fmt, uint32_t w,
                          uint32_t h, VkImageUsageFlags usage, VkImageAspectFlags aspect, VkDeviceMemory *mem,
                          VkImageView *view)
{
    VkImageCreateInfo imci = { VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, NULL, 0, VK_IMAGE_TYPE_2D, fmt, { w, h, 1 }, 1, 1,
        VK_SAMPLE_COUNT_1_BIT, VK_IMAGE_TILING_OPTIMAL, usage, VK_SHARING_MODE_EXCLUSIVE, 0, NULL,
        VK_IMAGE_LAYOUT_UNDEFINED };
    VkImage img;
    VK(vkCreateImage(dev, &imci, NULL, &img));
    VkMemoryRequirements mr;
    vkGetImageMemoryRequirements(dev, img, &mr);
    *mem = alloc_bind(dev, mp, &mr, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 1);
    VK(vkBindImageMemory(dev, img, *mem, 0));
    VkImageViewCreateInfo ivci = { VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO, NULL, 0, img, VK_IMAGE_VIEW_TYPE_2D, fmt,
        { VK_COMPONENT_SWIZZLE_IDENTITY, VK_COMPONENT_SWIZZLE_IDENTITY, VK_COMPONENT_SWIZZLE_IDENTITY,
          VK_COMPONENT_SWIZZLE_IDENTITY }, { aspect, 0, 1, 0, 1 } };
    VK(vkCreateImageView(dev, &ivci, NULL, view));
    return img;
}

static VkShaderModule make_module(VkDevice dev, const uint32_t *code, size_t size)
{
    VkShaderModuleCreateInfo ci = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, size, code };
    VkShaderModule m;
    VK(vkCreateShaderModule(dev, &ci, NULL, &m));
    return m;
}

static void submit_wait(VkDevice dev, VkQueue queue, VkCommandBuffer cb, VkFence fence)
{
    VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
    VK(vkQueueSubmit(queue, 1, &si, fence));
    VK(vkWaitForFences(dev, 1, &fence, VK_TRUE, 10ull * 1000 * 1000 * 1000));
    VK(vkResetFences(dev, 1, &fence));
}

static void image_barrier(VkCommandBuffer cb, VkImage img, VkImageLayout from, VkImageLayout to,
                          VkAccessFlags src_access, VkAccessFlags dst_access,
                          VkPipelineStageFlags src_stage, VkPipelineStageFlags dst_stage)
{
    VkImageMemoryBarrier b = { VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, NULL, src_access, dst_access, from, to,
        VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED, img, { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 } };
    vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, NULL, 0, NULL, 1, &b);
}

int main(int argc, char **argv)
{
    const char *png_path = argc > 1 ? argv[1] : "vk_scene.png";
    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "vk_scene", 1, "vgtrace", 1,
                              VK_API_VERSION_1_1 };
    VkInstanceCreateInfo ici = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL };
    VkInstance inst;
    VK(vkCreateInstance(&ici, NULL, &inst));

    uint32_t ndev = 0;
    VK(vkEnumeratePhysicalDevices(inst, &ndev, NULL));
    if (ndev == 0) fail("no Vulkan physical device");
    VkPhysicalDevice devs[16];
    if (ndev > 16) ndev = 16;
    VK(vkEnumeratePhysicalDevices(inst, &ndev, devs));
    VkPhysicalDevice pd = VK_NULL_HANDLE;
    uint32_t qfam = UINT32_MAX;
    VkPhysicalDeviceProperties props;
    const char *allow_cpu = getenv("WL_ALLOW_CPU_DEVICE");  /* for testing with lavapipe only */
    for (uint32_t d = 0; d < ndev && pd == VK_NULL_HANDLE; d++) {
        vkGetPhysicalDeviceProperties(devs[d], &props);
        if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && !(allow_cpu && *allow_cpu == '1')) continue;
        uint32_t nq = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(devs[d], &nq, NULL);
        VkQueueFamilyProperties qp[32];
        if (nq > 32) nq = 32;
        vkGetPhysicalDeviceQueueFamilyProperties(devs[d], &nq, qp);
        for (uint32_t q = 0; q < nq; q++)
            if (qp[q].queueFlags & VK_QUEUE_GRAPHICS_BIT) { pd = devs[d]; qfam = q; break; }
    }
    if (pd == VK_NULL_HANDLE) fail("no GPU with a graphics queue");

    /* depth format: D32_SFLOAT where it can be a depth attachment, else D16_UNORM (always can) */
    VkFormat dfmt = VK_FORMAT_D32_SFLOAT;
    VkFormatProperties fp;
    vkGetPhysicalDeviceFormatProperties(pd, dfmt, &fp);
    if (!(fp.optimalTilingFeatures & VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT)) dfmt = VK_FORMAT_D16_UNORM;
    printf("INFO vk_scene device=\"%s\" queue_family=%u depth=%s\n", props.deviceName, qfam,
           dfmt == VK_FORMAT_D32_SFLOAT ? "D32_SFLOAT" : "D16_UNORM");

    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, qfam, 1, &prio };
    VkDeviceCreateInfo dci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qci, 0, NULL, 0, NULL, NULL };
    VkDevice dev;
    VK(vkCreateDevice(pd, &dci, NULL, &dev));
    VkQueue queue;
    vkGetDeviceQueue(dev, qfam, 0, &queue);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);

    /* attachments and the texture */
    const VkFormat cfmt = VK_FORMAT_R8G8B8A8_UNORM;
    VkDeviceMemory color_mem, depth_mem, tex_mem;
    VkImageView color_view, depth_view, tex_view;
    VkImage color = make_image(dev, &mp, cfmt, W, H,
        VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, VK_IMAGE_ASPECT_COLOR_BIT,
        &color_mem, &color_view);
    VkImage depth = make_image(dev, &mp, dfmt, W, H, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
        VK_IMAGE_ASPECT_DEPTH_BIT, &depth_mem, &depth_view);
    VkImage tex = make_image(dev, &mp, cfmt, TEX, TEX, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
        VK_IMAGE_ASPECT_COLOR_BIT, &tex_mem, &tex_view);

    /* host-visible buffers: staging (texels), vertices, indices, tints (one per dynamic offset), readback */
    VkDeviceMemory stage_mem, vb_mem, ib_mem, ubo_mem, rb_mem;
    unsigned char *stage_p, *rb_p;
    float *vb_p, *ubo_p;
    uint16_t *ib_p;
    VkBuffer stage = make_buffer(dev, &mp, TEX * TEX * 4, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, &stage_mem,
                                 (void **)&stage_p);
    for (uint32_t j = 0; j < TEX; j++)
        for (uint32_t i = 0; i < TEX; i++) texel(i, j, stage_p + (j * TEX + i) * 4);
    static const float quad[4][4] = { { 0, 0, 0, 0 }, { 1, 0, 1, 0 }, { 1, 1, 1, 1 }, { 0, 1, 0, 1 } };  /* pos, uv */
    static const uint16_t indices[6] = { 0, 1, 2, 2, 3, 0 };
    VkBuffer vb = make_buffer(dev, &mp, sizeof(quad), VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, &vb_mem, (void **)&vb_p);
    memcpy(vb_p, quad, sizeof(quad));
    VkBuffer ib = make_buffer(dev, &mp, sizeof(indices), VK_BUFFER_USAGE_INDEX_BUFFER_BIT, &ib_mem, (void **)&ib_p);
    memcpy(ib_p, indices, sizeof(indices));
    VkDeviceSize ustride = props.limits.minUniformBufferOffsetAlignment;
    if (ustride < 256) ustride = 256;
    VkBuffer ubo = make_buffer(dev, &mp, ustride * NOBJ, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, &ubo_mem,
                               (void **)&ubo_p);
    for (uint32_t o = 0; o < NOBJ; o++) memcpy((unsigned char *)ubo_p + o * ustride, tints[o], sizeof(tints[o]));
    const VkDeviceSize frame_bytes = (VkDeviceSize)W * H * 4;
    VkBuffer rb = make_buffer(dev, &mp, frame_bytes * NFRAMES, VK_BUFFER_USAGE_TRANSFER_DST_BIT, &rb_mem,
                              (void **)&rb_p);

    VkSamplerCreateInfo sci = { VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO, NULL, 0, VK_FILTER_NEAREST, VK_FILTER_NEAREST,
        VK_SAMPLER_MIPMAP_MODE_NEAREST, VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE, VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
        VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE, 0.0f, VK_FALSE, 1.0f, VK_FALSE, VK_COMPARE_OP_ALWAYS, 0.0f, 0.0f,
        VK_BORDER_COLOR_FLOAT_OPAQUE_BLACK, VK_FALSE };
    VkSampler sampler;
    VK(vkCreateSampler(dev, &sci, NULL, &sampler));

    /* descriptors: binding 0 the combined image sampler, binding 1 the tint (dynamic offset per draw) */
    VkDescriptorSetLayoutBinding binds[2] = {
        { 0, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1, VK_SHADER_STAGE_FRAGMENT_BIT, NULL },
        { 1, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC, 1, VK_SHADER_STAGE_FRAGMENT_BIT, NULL } };
    VkDescriptorSetLayoutCreateInfo dslci = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, 2, binds };
    VkDescriptorSetLayout dsl;
    VK(vkCreateDescriptorSetLayout(dev, &dslci, NULL, &dsl));
    VkDescriptorPoolSize psz[2] = { { VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1 },
                                    { VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC, 1 } };
    VkDescriptorPoolCreateInfo dpci = { VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, 1, 2, psz };
    VkDescriptorPool dpool;
    VK(vkCreateDescriptorPool(dev, &dpci, NULL, &dpool));
    VkDescriptorSetAllocateInfo dsai = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, dpool, 1, &dsl };
    VkDescriptorSet dset;
    VK(vkAllocateDescriptorSets(dev, &dsai, &dset));
    VkDescriptorImageInfo dii = { sampler, tex_view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL };
    VkDescriptorBufferInfo dbi = { ubo, 0, 16 };
    VkWriteDescriptorSet wds[2] = {
        { VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, dset, 0, 0, 1, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
          &dii, NULL, NULL },
        { VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, dset, 1, 0, 1, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC,
          NULL, &dbi, NULL } };
    vkUpdateDescriptorSets(dev, 2, wds, 0, NULL);

    /* render pass: clear colour and depth; colour stored and left for the copy, depth not kept.
     * The external dependency orders a frame after the previous frame's copy and depth writes. */
    VkAttachmentDescription atts[2] = {
        { 0, cfmt, VK_SAMPLE_COUNT_1_BIT, VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_STORE,
          VK_ATTACHMENT_LOAD_OP_DONT_CARE, VK_ATTACHMENT_STORE_OP_DONT_CARE, VK_IMAGE_LAYOUT_UNDEFINED,
          VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL },
        { 0, dfmt, VK_SAMPLE_COUNT_1_BIT, VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_DONT_CARE,
          VK_ATTACHMENT_LOAD_OP_DONT_CARE, VK_ATTACHMENT_STORE_OP_DONT_CARE, VK_IMAGE_LAYOUT_UNDEFINED,
          VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL } };
    VkAttachmentReference cref = { 0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
    VkAttachmentReference dref = { 1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL };
    VkSubpassDescription sub = { 0, VK_PIPELINE_BIND_POINT_GRAPHICS, 0, NULL, 1, &cref, NULL, &dref, 0, NULL };
    VkSubpassDependency deps[2] = {
        { VK_SUBPASS_EXTERNAL, 0, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT,
          VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT,
          VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
          VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
          VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT, 0 },
        { 0, VK_SUBPASS_EXTERNAL, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT, 0 } };
    VkRenderPassCreateInfo rpci = { VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO, NULL, 0, 2, atts, 1, &sub, 2, deps };
    VkRenderPass rp;
    VK(vkCreateRenderPass(dev, &rpci, NULL, &rp));
    VkImageView fb_views[2] = { color_view, depth_view };
    VkFramebufferCreateInfo fbci = { VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO, NULL, 0, rp, 2, fb_views, W, H, 1 };
    VkFramebuffer fb;
    VK(vkCreateFramebuffer(dev, &fbci, NULL, &fb));

    /* pipeline: two vertex attributes from one binding, depth test LESS with writes */
    VkShaderModule vs = make_module(dev, vk_scene_vert_spv, sizeof(vk_scene_vert_spv));
    VkShaderModule fs = make_module(dev, vk_scene_frag_spv, sizeof(vk_scene_frag_spv));
    VkPipelineShaderStageCreateInfo stages[2] = {
        { VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_VERTEX_BIT, vs, "main", NULL },
        { VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_FRAGMENT_BIT, fs, "main", NULL } };
    VkVertexInputBindingDescription vbind = { 0, sizeof(quad[0]), VK_VERTEX_INPUT_RATE_VERTEX };
    VkVertexInputAttributeDescription vattr[2] = { { 0, 0, VK_FORMAT_R32G32_SFLOAT, 0 },
                                                   { 1, 0, VK_FORMAT_R32G32_SFLOAT, 2 * sizeof(float) } };
    VkPipelineVertexInputStateCreateInfo vi = { VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO, NULL, 0,
                                                1, &vbind, 2, vattr };
    VkPipelineInputAssemblyStateCreateInfo ia = { VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO, NULL, 0,
                                                  VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST, VK_FALSE };
    VkViewport vp = { 0.0f, 0.0f, (float)W, (float)H, 0.0f, 1.0f };
    VkRect2D scissor = { { 0, 0 }, { W, H } };
    VkPipelineViewportStateCreateInfo vps = { VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO, NULL, 0,
                                              1, &vp, 1, &scissor };
    VkPipelineRasterizationStateCreateInfo rs = { VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO, NULL, 0,
        VK_FALSE, VK_FALSE, VK_POLYGON_MODE_FILL, VK_CULL_MODE_NONE, VK_FRONT_FACE_CLOCKWISE,
        VK_FALSE, 0.0f, 0.0f, 0.0f, 1.0f };
    VkPipelineMultisampleStateCreateInfo ms = { VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO, NULL, 0,
                                                VK_SAMPLE_COUNT_1_BIT, VK_FALSE, 0.0f, NULL, VK_FALSE, VK_FALSE };
    VkPipelineDepthStencilStateCreateInfo dss;
    memset(&dss, 0, sizeof(dss));
    dss.sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO;
    dss.depthTestEnable = VK_TRUE;
    dss.depthWriteEnable = VK_TRUE;
    dss.depthCompareOp = VK_COMPARE_OP_LESS;
    dss.maxDepthBounds = 1.0f;
    VkPipelineColorBlendAttachmentState cba = { VK_FALSE, 0, 0, 0, 0, 0, 0,
        VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT };
    VkPipelineColorBlendStateCreateInfo cb_state = { VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO, NULL, 0,
                                                     VK_FALSE, VK_LOGIC_OP_COPY, 1, &cba, { 0, 0, 0, 0 } };
    VkPushConstantRange pcr = { VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(object_pc) };
    VkPipelineLayoutCreateInfo plci = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &dsl, 1, &pcr };
    VkPipelineLayout pl;
    VK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));
    VkGraphicsPipelineCreateInfo gpci = { VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, NULL, 0, 2, stages, &vi, &ia,
        NULL, &vps, &rs, &ms, &dss, &cb_state, NULL, pl, rp, 0, VK_NULL_HANDLE, -1 };
    VkPipeline pipe;
    VK(vkCreateGraphicsPipelines(dev, VK_NULL_HANDLE, 1, &gpci, NULL, &pipe));

    VkCommandPoolCreateInfo cpoolci = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, qfam };
    VkCommandPool cpool;
    VK(vkCreateCommandPool(dev, &cpoolci, NULL, &cpool));
    VkCommandBufferAllocateInfo cbai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, cpool,
                                         VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 + NFRAMES };
    VkCommandBuffer cbs[1 + NFRAMES];
    VK(vkAllocateCommandBuffers(dev, &cbai, cbs));
    VkCommandBufferBeginInfo cbbi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                      VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
    VkFenceCreateInfo fci = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
    VkFence fence;
    VK(vkCreateFence(dev, &fci, NULL, &fence));

    /* setup submission: the texture upload */
    VK(vkBeginCommandBuffer(cbs[0], &cbbi));
    image_barrier(cbs[0], tex, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
                  VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    VkBufferImageCopy up = { 0, 0, 0, { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 }, { 0, 0, 0 }, { TEX, TEX, 1 } };
    vkCmdCopyBufferToImage(cbs[0], stage, tex, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &up);
    image_barrier(cbs[0], tex, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                  VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                  VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT);
    VK(vkEndCommandBuffer(cbs[0]));
    submit_wait(dev, queue, cbs[0], fence);

    /* the frames: one submission each */
    VkClearValue clears[2];
    memset(clears, 0, sizeof(clears));
    for (int c = 0; c < 4; c++) clears[0].color.float32[c] = clear_rgba[c] / 255.0f;
    clears[1].depthStencil.depth = 1.0f;
    for (uint32_t f = 0; f < NFRAMES; f++) {
        VkCommandBuffer cb = cbs[1 + f];
        VK(vkBeginCommandBuffer(cb, &cbbi));
        VkRenderPassBeginInfo rpbi = { VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, NULL, rp, fb, { { 0, 0 }, { W, H } },
                                       2, clears };
        vkCmdBeginRenderPass(cb, &rpbi, VK_SUBPASS_CONTENTS_INLINE);
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipe);
        VkDeviceSize vb_off = 0;
        vkCmdBindVertexBuffers(cb, 0, 1, &vb, &vb_off);
        vkCmdBindIndexBuffer(cb, ib, 0, VK_INDEX_TYPE_UINT16);
        for (uint32_t o = 0; o < NOBJ; o++) {
            uint32_t dyn = (uint32_t)(o * ustride);
            vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pl, 0, 1, &dset, 1, &dyn);
            vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(object_pc), &scene[f][o]);
            vkCmdDrawIndexed(cb, 6, 1, 0, 0, 0);
        }
        vkCmdEndRenderPass(cb);
        VkBufferImageCopy region = { f * frame_bytes, 0, 0, { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 }, { 0, 0, 0 },
                                     { W, H, 1 } };
        vkCmdCopyImageToBuffer(cb, color, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, rb, 1, &region);
        VkBufferMemoryBarrier bmb = { VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER, NULL, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_ACCESS_HOST_READ_BIT, VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED, rb, f * frame_bytes,
            frame_bytes };
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, NULL, 1, &bmb, 0,
                             NULL);
        VK(vkEndCommandBuffer(cb));
        submit_wait(dev, queue, cb, fence);
    }

    /* compare both frames with the CPU reference */
    static unsigned char pixels[NFRAMES][W * H * 4], ref[W * H * 4];
    memcpy(pixels, rb_p, sizeof(pixels));
    int maxdiff = 0;
    unsigned bad_total = 0, covered[NFRAMES];
    char first_bad[160] = "";
    for (uint32_t f = 0; f < NFRAMES; f++) {
        reference_frame(f, ref);
        unsigned bad = 0, fdiff = 0;
        covered[f] = 0;
        for (uint32_t p = 0; p < W * H; p++) {
            const unsigned char *g = pixels[f] + p * 4, *r = ref + p * 4;
            if (memcmp(g, clear_rgba, 4) != 0) covered[f]++;
            int d = 0;
            for (int c = 0; c < 4; c++) { int e = abs((int)g[c] - (int)r[c]); if (e > d) d = e; }
            if ((unsigned)d > fdiff) fdiff = (unsigned)d;
            if (d > TOLERANCE) {
                if (bad++ == 0 && !first_bad[0])
                    snprintf(first_bad, sizeof(first_bad), "frame %u (%u,%u) gpu=%u,%u,%u,%u ref=%u,%u,%u,%u", f,
                             p % W, p / W, g[0], g[1], g[2], g[3], r[0], r[1], r[2], r[3]);
            }
        }
        if ((int)fdiff > maxdiff) maxdiff = (int)fdiff;
        bad_total += bad;
        printf("INFO vk_scene frame=%u draws=%u covered=%u maxdiff=%u beyond_tolerance=%u\n", f, NOBJ, covered[f],
               fdiff, bad);
    }
    uint64_t h = wl_fnv1a64(pixels, sizeof(pixels));
    if (wl_write_png_rgba(png_path, pixels[NFRAMES - 1], W, H) != 0) {
        fprintf(stderr, "FAIL vk_scene: cannot write %s\n", png_path);
        return 1;
    }
    if (bad_total) {
        fprintf(stderr, "FAIL vk_scene: %u pixel(s) differ from the CPU reference by more than %d (max %d), first: %s;"
                " hash=%016llx\n", bad_total, TOLERANCE, maxdiff, first_bad, (unsigned long long)h);
        return 1;
    }

    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, cpool, NULL);
    vkDestroyPipeline(dev, pipe, NULL);
    vkDestroyPipelineLayout(dev, pl, NULL);
    vkDestroyShaderModule(dev, vs, NULL);
    vkDestroyShaderModule(dev, fs, NULL);
    vkDestroyFramebuffer(dev, fb, NULL);
    vkDestroyRenderPass(dev, rp, NULL);
    vkDestroyDescriptorPool(dev, dpool, NULL);
    vkDestroyDescriptorSetLayout(dev, dsl, NULL);
    vkDestroySampler(dev, sampler, NULL);
    VkBuffer bufs[5] = { stage, vb, ib, ubo, rb };
    VkDeviceMemory bmems[5] = { stage_mem, vb_mem, ib_mem, ubo_mem, rb_mem };
    for (int i = 0; i < 5; i++) { vkDestroyBuffer(dev, bufs[i], NULL); vkFreeMemory(dev, bmems[i], NULL); }
    VkImage imgs[3] = { color, depth, tex };
    VkImageView views[3] = { color_view, depth_view, tex_view };
    VkDeviceMemory imems[3] = { color_mem, depth_mem, tex_mem };
    for (int i = 0; i < 3; i++) {
        vkDestroyImageView(dev, views[i], NULL);
        vkDestroyImage(dev, imgs[i], NULL);
        vkFreeMemory(dev, imems[i], NULL);
    }
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    printf("RESULT vk_scene ok %ux%u frames=%u draws=%u covered=%u,%u maxdiff=%d hash=%016llx\n", W, H, NFRAMES,
           NFRAMES * NOBJ, covered[0], covered[1], maxdiff, (unsigned long long)h);
    return 0;
}
