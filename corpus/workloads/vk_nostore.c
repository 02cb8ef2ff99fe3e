/* vk_nostore.c - vgtrace corpus workload: Vulkan draws that store nothing, each for one known reason,
 * beside normal draws that store. Every case is its own submission: a render pass clearing a 64x64
 * R8G8B8A8_UNORM image to opaque black, one draw of the vk_triangle triangle with that case's pipeline,
 * a copy to a host-visible buffer, a check of the pixels:
 *   normal           the triangle (stores)
 *   write_mask_zero  colorWriteMask 0                      -> `vgt draws`: write_mask_zero
 *   discard          a fragment shader that discards all   -> sph_no_outputs (or the SPH's kills_pixels)
 *   raster_off       rasterizerDiscardEnable               -> stage_disabled (SET_RASTER_ENABLE 0)
 *   scissor_zero     a dynamic scissor of extent 0x0       -> scissor_zero
 *   normal_again     the triangle (stores)
 * Prints: INFO line (device), then RESULT vk_nostore ok cases=6 stored=2 covered=<pixels of a normal draw>
 * hash=<fnv1a64 of the last image>; exit 0, or 1 (FAIL on stderr). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>
#include "wl_common.h"
#include "vk_triangle_vert_spv.h"
#include "vk_triangle_frag_spv.h"
#include "vk_nostore_discard_frag_spv.h"

#define W 64u
#define H 64u

#define VK(x) do { VkResult r_ = (x); if (r_ != VK_SUCCESS) { \
    fprintf(stderr, "FAIL vk_nostore: %s returned %d (%s:%d)\n", #x, (int)r_, __FILE__, __LINE__); \
    exit(1); } } while (0)

static void fail(const char *msg) { fprintf(stderr, "FAIL vk_nostore: %s\n", msg); exit(1); }

static uint32_t find_mem(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp->memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
}

static VkShaderModule make_module(VkDevice dev, const uint32_t *code, size_t size)
{
    VkShaderModuleCreateInfo ci = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, size, code };
    VkShaderModule m;
    VK(vkCreateShaderModule(dev, &ci, NULL, &m));
    return m;
}

enum { NORMAL, WRITE_MASK_ZERO, DISCARD, RASTER_OFF, SCISSOR_ZERO, NCASES };
static const char *const case_names[NCASES] = { "normal", "write_mask_zero", "discard", "raster_off", "scissor_zero" };

int main(void)
{
    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "vk_nostore", 1, "vgtrace", 1,
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
    printf("INFO vk_nostore device=\"%s\" queue_family=%u\n", props.deviceName, qfam);

    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, qfam, 1, &prio };
    VkDeviceCreateInfo dci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qci, 0, NULL, 0, NULL, NULL };
    VkDevice dev;
    VK(vkCreateDevice(pd, &dci, NULL, &dev));
    VkQueue queue;
    vkGetDeviceQueue(dev, qfam, 0, &queue);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);

    /* colour attachment image (device-local, optimal tiling) */
    const VkFormat fmt = VK_FORMAT_R8G8B8A8_UNORM;
    VkImageCreateInfo imci = { VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, NULL, 0, VK_IMAGE_TYPE_2D, fmt, { W, H, 1 }, 1, 1,
        VK_SAMPLE_COUNT_1_BIT, VK_IMAGE_TILING_OPTIMAL,
        VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, VK_SHARING_MODE_EXCLUSIVE, 0, NULL,
        VK_IMAGE_LAYOUT_UNDEFINED };
    VkImage img;
    VK(vkCreateImage(dev, &imci, NULL, &img));
    VkMemoryRequirements mr;
    vkGetImageMemoryRequirements(dev, img, &mr);
    uint32_t mt = find_mem(&mp, mr.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (mt == UINT32_MAX) mt = find_mem(&mp, mr.memoryTypeBits, 0);
    if (mt == UINT32_MAX) fail("no memory type for the image");
    VkMemoryAllocateInfo mai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size, mt };
    VkDeviceMemory img_mem;
    VK(vkAllocateMemory(dev, &mai, NULL, &img_mem));
    VK(vkBindImageMemory(dev, img, img_mem, 0));
    VkImageViewCreateInfo ivci = { VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO, NULL, 0, img, VK_IMAGE_VIEW_TYPE_2D, fmt,
        { VK_COMPONENT_SWIZZLE_IDENTITY, VK_COMPONENT_SWIZZLE_IDENTITY, VK_COMPONENT_SWIZZLE_IDENTITY,
          VK_COMPONENT_SWIZZLE_IDENTITY }, { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 } };
    VkImageView view;
    VK(vkCreateImageView(dev, &ivci, NULL, &view));

    /* readback buffer (host-visible, coherent) */
    const VkDeviceSize size = (VkDeviceSize)W * H * 4;
    VkBufferCreateInfo bci = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, size, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               VK_SHARING_MODE_EXCLUSIVE, 0, NULL };
    VkBuffer buf;
    VK(vkCreateBuffer(dev, &bci, NULL, &buf));
    vkGetBufferMemoryRequirements(dev, buf, &mr);
    mt = find_mem(&mp, mr.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (mt == UINT32_MAX) fail("no host-visible coherent memory type");
    VkMemoryAllocateInfo bai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size, mt };
    VkDeviceMemory buf_mem;
    VK(vkAllocateMemory(dev, &bai, NULL, &buf_mem));
    VK(vkBindBufferMemory(dev, buf, buf_mem, 0));

    /* render pass: clear, store, end in TRANSFER_SRC_OPTIMAL */
    VkAttachmentDescription att = { 0, fmt, VK_SAMPLE_COUNT_1_BIT, VK_ATTACHMENT_LOAD_OP_CLEAR,
        VK_ATTACHMENT_STORE_OP_STORE, VK_ATTACHMENT_LOAD_OP_DONT_CARE, VK_ATTACHMENT_STORE_OP_DONT_CARE,
        VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL };
    VkAttachmentReference ref = { 0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
    VkSubpassDescription sub = { 0, VK_PIPELINE_BIND_POINT_GRAPHICS, 0, NULL, 1, &ref, NULL, NULL, 0, NULL };
    VkSubpassDependency dep = { 0, VK_SUBPASS_EXTERNAL, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
        VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT, 0 };
    VkRenderPassCreateInfo rpci = { VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO, NULL, 0, 1, &att, 1, &sub, 1, &dep };
    VkRenderPass rp;
    VK(vkCreateRenderPass(dev, &rpci, NULL, &rp));
    VkFramebufferCreateInfo fbci = { VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO, NULL, 0, rp, 1, &view, W, H, 1 };
    VkFramebuffer fb;
    VK(vkCreateFramebuffer(dev, &fbci, NULL, &fb));

    /* pipeline */
    VkShaderModule vs = make_module(dev, vk_triangle_vert_spv, sizeof(vk_triangle_vert_spv));
    VkShaderModule fs = make_module(dev, vk_triangle_frag_spv, sizeof(vk_triangle_frag_spv));
    VkPipelineShaderStageCreateInfo stages[2] = {
        { VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_VERTEX_BIT, vs, "main", NULL },
        { VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_FRAGMENT_BIT, fs, "main", NULL } };
    VkPipelineVertexInputStateCreateInfo vi = { VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO, NULL, 0,
                                                0, NULL, 0, NULL };
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
    VkPipelineColorBlendAttachmentState cba = { VK_FALSE, 0, 0, 0, 0, 0, 0,
        VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT };
    VkPipelineColorBlendStateCreateInfo cb_state = { VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO, NULL, 0,
                                                     VK_FALSE, VK_LOGIC_OP_COPY, 1, &cba, { 0, 0, 0, 0 } };
    VkPipelineLayoutCreateInfo plci = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 0, NULL, 0, NULL };
    VkPipelineLayout pl;
    VK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));
    /* one pipeline per case, each the normal one with one thing changed */
    VkShaderModule fs_discard = make_module(dev, vk_nostore_discard_frag_spv, sizeof(vk_nostore_discard_frag_spv));
    VkPipeline pipes[NCASES];
    for (int k = 0; k < NCASES; k++) {
        VkPipelineShaderStageCreateInfo st[2] = { stages[0], stages[1] };
        VkPipelineRasterizationStateCreateInfo rsk = rs;
        VkPipelineColorBlendAttachmentState cbak = cba;
        VkPipelineColorBlendStateCreateInfo cbk = cb_state;
        VkDynamicState dyn_scissor = VK_DYNAMIC_STATE_SCISSOR;
        VkPipelineDynamicStateCreateInfo dyn = { VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO, NULL, 0, 1,
                                                 &dyn_scissor };
        cbk.pAttachments = &cbak;
        if (k == WRITE_MASK_ZERO) cbak.colorWriteMask = 0;
        if (k == DISCARD) st[1].module = fs_discard;
        if (k == RASTER_OFF) rsk.rasterizerDiscardEnable = VK_TRUE;
        VkGraphicsPipelineCreateInfo gpci = { VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, NULL, 0, 2, st, &vi, &ia,
            NULL, &vps, &rsk, &ms, NULL, &cbk, k == SCISSOR_ZERO ? &dyn : NULL, pl, rp, 0, VK_NULL_HANDLE, -1 };
        VK(vkCreateGraphicsPipelines(dev, VK_NULL_HANDLE, 1, &gpci, NULL, &pipes[k]));
    }

    /* one submission per case: clear, draw, copy the image to the buffer, check */
    VkCommandPoolCreateInfo cpoolci = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                        NULL, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, qfam };
    VkCommandPool cpool;
    VK(vkCreateCommandPool(dev, &cpoolci, NULL, &cpool));
    VkCommandBufferAllocateInfo cbai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, cpool,
                                         VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
    VkCommandBuffer cb;
    VK(vkAllocateCommandBuffers(dev, &cbai, &cb));
    VkFenceCreateInfo fci = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
    VkFence fence;
    VK(vkCreateFence(dev, &fci, NULL, &fence));
    static unsigned char pixels[W * H * 4];
    static const unsigned char black[4] = { 0, 0, 0, 255 };
    const int order[] = { NORMAL, WRITE_MASK_ZERO, DISCARD, RASTER_OFF, SCISSOR_ZERO, NORMAL };
    unsigned stored = 0, normal_covered = 0;
    for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++) {
        int k = order[i];
        VkCommandBufferBeginInfo cbbi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                          VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
        VK(vkBeginCommandBuffer(cb, &cbbi));
        VkClearValue clear;
        memset(&clear, 0, sizeof(clear));
        clear.color.float32[3] = 1.0f;  /* opaque black */
        VkRenderPassBeginInfo rpbi = { VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, NULL, rp, fb, { { 0, 0 }, { W, H } },
                                       1, &clear };
        vkCmdBeginRenderPass(cb, &rpbi, VK_SUBPASS_CONTENTS_INLINE);
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes[k]);
        if (k == SCISSOR_ZERO) {
            VkRect2D empty = { { 0, 0 }, { 0, 0 } };
            vkCmdSetScissor(cb, 0, 1, &empty);
        }
        vkCmdDraw(cb, 3, 1, 0, 0);
        vkCmdEndRenderPass(cb);
        VkBufferImageCopy region = { 0, 0, 0, { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 }, { 0, 0, 0 }, { W, H, 1 } };
        vkCmdCopyImageToBuffer(cb, img, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf, 1, &region);
        VkBufferMemoryBarrier bmb = { VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER, NULL, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_ACCESS_HOST_READ_BIT, VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED, buf, 0, VK_WHOLE_SIZE };
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, NULL, 1, &bmb, 0, NULL);
        VK(vkEndCommandBuffer(cb));
        VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
        VK(vkQueueSubmit(queue, 1, &si, fence));
        VK(vkWaitForFences(dev, 1, &fence, VK_TRUE, 10ull * 1000 * 1000 * 1000));
        VK(vkResetFences(dev, 1, &fence));
        VK(vkResetCommandBuffer(cb, 0));

        unsigned char *px;
        VK(vkMapMemory(dev, buf_mem, 0, size, 0, (void **)&px));
        memcpy(pixels, px, sizeof(pixels));
        vkUnmapMemory(dev, buf_mem);
        unsigned covered = 0;
        for (uint32_t p = 0; p < W * H; p++) {
            if (pixels[p * 4 + 3] != 255) fail("pixel is not opaque");
            if (memcmp(pixels + p * 4, black, 4) != 0) covered++;
        }
        printf("INFO vk_nostore case=%s covered=%u\n", case_names[k], covered);
        if (k == NORMAL) {
            if (covered < W * H / 4 || covered > W * H * 3 / 4) fail("a normal draw stored an implausible pixel count");
            if (normal_covered && covered != normal_covered) fail("the two normal draws differ");
            normal_covered = covered;
            stored++;
        } else if (covered != 0) {
            fprintf(stderr, "FAIL vk_nostore: case %s stored %u pixels, expected none\n", case_names[k], covered);
            return 1;
        }
    }
    uint64_t h = wl_fnv1a64(pixels, sizeof(pixels));

    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, cpool, NULL);
    for (int k = 0; k < NCASES; k++) vkDestroyPipeline(dev, pipes[k], NULL);
    vkDestroyShaderModule(dev, fs_discard, NULL);
    vkDestroyPipelineLayout(dev, pl, NULL);
    vkDestroyShaderModule(dev, vs, NULL);
    vkDestroyShaderModule(dev, fs, NULL);
    vkDestroyFramebuffer(dev, fb, NULL);
    vkDestroyRenderPass(dev, rp, NULL);
    vkDestroyBuffer(dev, buf, NULL);
    vkFreeMemory(dev, buf_mem, NULL);
    vkDestroyImageView(dev, view, NULL);
    vkDestroyImage(dev, img, NULL);
    vkFreeMemory(dev, img_mem, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    printf("RESULT vk_nostore ok cases=%u stored=%u covered=%u hash=%016llx\n",
           (unsigned)(sizeof order / sizeof order[0]), stored, normal_covered, (unsigned long long)h);
    return 0;
}
