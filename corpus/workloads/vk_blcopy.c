/* vk_blcopy.c - vgtrace corpus workload: known bytes through the copy engine into block-linear images, and the
 * images' raw memory read back, so that a trace holds block-linear bytes the GPU itself laid out.
 *
 * Two optimal-tiling images (the driver lays them out block-linear): A, 2-D, 200x50 texels, 2 layers,
 * R8G8B8A8_UINT (800-byte rows: a partial GOB at the right edge, a partial block at the bottom); B, 3-D,
 * 40x24x5, R32_UINT (several depth slices). Each is bound at offset 0 of its own device memory, and a buffer
 * is bound to the same memory ("alias"). On a transfer-only queue when the device has one (the copy engine):
 *   1. the alias filled with 0xA5 (the bytes no texel covers are then known);
 *   2. every texel written from a host buffer of known values (pitch -> block-linear), then a 40x20
 *      rectangle of A's layer 1 at (17, 5) written again with other values (an origin inside a GOB);
 *   3. the alias copied whole into a host-visible buffer (the raw block-linear bytes), and two rectangles
 *      copied out of the images (block-linear -> pitch): A layer 1 at (33, 9) 64x24, B at (3, 2, 1) 20x10x3.
 * The host checks both rectangles against the values it wrote; the raw bytes are only hashed: their layout is
 * what a replay must reproduce, and the capture records them (as observed memory, when it is unmapped).
 * Prints: INFO line (device, queue family), then
 *   RESULT vk_blcopy ok raw_a=<fnv1a64> raw_b=<fnv1a64> rect=<fnv1a64> ; exit 0, or 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>
#include "wl_common.h"

#define VK(x) do { VkResult r_ = (x); if (r_ != VK_SUCCESS) { \
    fprintf(stderr, "FAIL vk_blcopy: %s returned %d (%s:%d)\n", #x, (int)r_, __FILE__, __LINE__); \
    exit(1); } } while (0)

static void fail(const char *msg) { fprintf(stderr, "FAIL vk_blcopy: %s\n", msg); exit(1); }

/* the geometry: A is 2-D with layers, B is 3-D */
enum { AW = 200, AH = 50, AL = 2, BW = 40, BH = 24, BD = 5 };
/* A's overwritten rectangle (layer 1) and the two rectangles read back */
enum { PX = 17, PY = 5, PW = 40, PH = 20 };
enum { RAX = 33, RAY = 9, RAW_ = 64, RAH = 24 };
enum { RBX = 3, RBY = 2, RBZ = 1, RBW = 20, RBH = 10, RBD = 3 };

/* a distinct value per texel of each upload: a wrong address anywhere shows */
static uint32_t texel(uint32_t salt, uint32_t i)
{
    uint32_t v = (i + 1u) * 2654435761u ^ salt;
    v ^= v >> 15;
    return v * 2246822519u;
}

/* the value A holds at (x, y, layer) after both uploads */
static uint32_t a_value(uint32_t x, uint32_t y, uint32_t layer)
{
    if (layer == 1 && x >= PX && x < PX + PW && y >= PY && y < PY + PH)
        return texel(0x5eed0003u, (y - PY) * PW + (x - PX));
    return texel(0x5eed0001u, (layer * AH + y) * AW + x);
}

static uint32_t b_value(uint32_t x, uint32_t y, uint32_t z) { return texel(0x5eed0002u, (z * BH + y) * BW + x); }

struct gpu {
    VkPhysicalDevice pd;
    VkDevice dev;
    uint32_t qfam;
    VkPhysicalDeviceMemoryProperties mp;
};

static uint32_t find_type(const struct gpu *g, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < g->mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (g->mp.memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
}

/* picks a GPU and its queue family: transfer-only when there is one, else the first with transfer */
static void pick_device(VkInstance inst, struct gpu *g, VkPhysicalDeviceProperties *props)
{
    uint32_t ndev = 0;
    VK(vkEnumeratePhysicalDevices(inst, &ndev, NULL));
    if (ndev == 0) fail("no Vulkan physical device");
    VkPhysicalDevice devs[16];
    if (ndev > 16) ndev = 16;
    VK(vkEnumeratePhysicalDevices(inst, &ndev, devs));
    const char *allow_cpu = getenv("WL_ALLOW_CPU_DEVICE");  /* for testing with lavapipe only */
    g->pd = VK_NULL_HANDLE;
    for (uint32_t d = 0; d < ndev && g->pd == VK_NULL_HANDLE; d++) {
        vkGetPhysicalDeviceProperties(devs[d], props);
        if (props->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && !(allow_cpu && *allow_cpu == '1')) continue;
        uint32_t nq = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(devs[d], &nq, NULL);
        VkQueueFamilyProperties qp[32];
        if (nq > 32) nq = 32;
        vkGetPhysicalDeviceQueueFamilyProperties(devs[d], &nq, qp);
        const VkQueueFlags work = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
        uint32_t any = UINT32_MAX, only = UINT32_MAX;
        for (uint32_t q = 0; q < nq; q++) {
            int transfer = (qp[q].queueFlags & (VK_QUEUE_TRANSFER_BIT | work)) != 0;
            if (transfer && any == UINT32_MAX) any = q;
            if ((qp[q].queueFlags & VK_QUEUE_TRANSFER_BIT) && !(qp[q].queueFlags & work) && only == UINT32_MAX) only = q;
        }
        if (any == UINT32_MAX) continue;
        g->pd = devs[d];
        g->qfam = only != UINT32_MAX ? only : any;
    }
    if (g->pd == VK_NULL_HANDLE) fail("no GPU with a transfer queue");
    vkGetPhysicalDeviceMemoryProperties(g->pd, &g->mp);
}

static VkDeviceMemory alloc_mem(const struct gpu *g, VkDeviceSize size, uint32_t type)
{
    VkMemoryAllocateInfo mai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, size, type };
    VkDeviceMemory mem;
    VK(vkAllocateMemory(g->dev, &mai, NULL, &mem));
    return mem;
}

static VkBuffer make_buffer(const struct gpu *g, VkDeviceSize size, VkBufferUsageFlags usage)
{
    VkBufferCreateInfo bci = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, size, usage,
                               VK_SHARING_MODE_EXCLUSIVE, 0, NULL };
    VkBuffer b;
    VK(vkCreateBuffer(g->dev, &bci, NULL, &b));
    return b;
}

/* a host-visible buffer of SIZE bytes, mapped */
static VkBuffer host_buffer(const struct gpu *g, VkDeviceSize size, VkBufferUsageFlags usage, VkDeviceMemory *mem,
                            void **map)
{
    VkBuffer b = make_buffer(g, size, usage);
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(g->dev, b, &mr);
    uint32_t t = find_type(g, mr.memoryTypeBits,
                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (t == UINT32_MAX) fail("no host-visible coherent memory type for a buffer");
    *mem = alloc_mem(g, mr.size, t);
    VK(vkBindBufferMemory(g->dev, b, *mem, 0));
    VK(vkMapMemory(g->dev, *mem, 0, size, 0, map));
    return b;
}

struct aliased {
    VkImage image;
    VkBuffer alias;          /* the image's memory seen as a buffer */
    VkDeviceMemory mem;
    VkDeviceSize size;       /* the image's memory requirement */
};

/* an optimal-tiling image and a buffer over the same memory, both at offset 0 */
static struct aliased aliased_image(const struct gpu *g, VkImageType type, VkFormat fmt, VkExtent3D ext, uint32_t layers)
{
    struct aliased a;
    VkImageCreateInfo ici = { VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, NULL, 0, type, fmt, ext, 1, layers,
                              VK_SAMPLE_COUNT_1_BIT, VK_IMAGE_TILING_OPTIMAL,
                              VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                              VK_SHARING_MODE_EXCLUSIVE, 0, NULL, VK_IMAGE_LAYOUT_UNDEFINED };
    VK(vkCreateImage(g->dev, &ici, NULL, &a.image));
    VkMemoryRequirements ir, br;
    vkGetImageMemoryRequirements(g->dev, a.image, &ir);
    a.size = ir.size;
    a.alias = make_buffer(g, ir.size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT);
    vkGetBufferMemoryRequirements(g->dev, a.alias, &br);
    uint32_t bits = ir.memoryTypeBits & br.memoryTypeBits;
    uint32_t t = find_type(g, bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (t == UINT32_MAX) t = find_type(g, bits, 0);
    if (t == UINT32_MAX) fail("no memory type holds both an optimal image and a buffer");
    VkDeviceSize size = ir.size > br.size ? ir.size : br.size;
    a.mem = alloc_mem(g, size, t);
    VK(vkBindImageMemory(g->dev, a.image, a.mem, 0));
    VK(vkBindBufferMemory(g->dev, a.alias, a.mem, 0));
    return a;
}

static void barrier_all(VkCommandBuffer cb, VkAccessFlags src, VkAccessFlags dst, VkPipelineStageFlags dst_stage)
{
    VkMemoryBarrier mb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, src, dst };
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void layout(VkCommandBuffer cb, VkImage img, VkImageLayout from, VkImageLayout to, VkAccessFlags src,
                   VkAccessFlags dst, uint32_t layers)
{
    VkImageMemoryBarrier ib = { VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, NULL, src, dst, from, to,
                                VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED, img,
                                { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, layers } };
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL,
                         1, &ib);
}

static VkBufferImageCopy region(VkDeviceSize off, uint32_t layer, uint32_t layers, VkOffset3D o, VkExtent3D e)
{
    VkBufferImageCopy r = { off, 0, 0, { VK_IMAGE_ASPECT_COLOR_BIT, 0, layer, layers }, o, e };
    return r;
}

/* the staging buffer's layout: A's texels, B's texels, the rectangle's texels */
#define A_TEXELS ((VkDeviceSize)AW * AH * AL)
#define B_TEXELS ((VkDeviceSize)BW * BH * BD)
#define P_TEXELS ((VkDeviceSize)PW * PH)
#define RA_TEXELS ((VkDeviceSize)RAW_ * RAH)
#define RB_TEXELS ((VkDeviceSize)RBW * RBH * RBD)

static void fill_staging(uint32_t *s)
{
    for (uint32_t i = 0; i < A_TEXELS; i++) s[i] = texel(0x5eed0001u, i);
    for (uint32_t i = 0; i < B_TEXELS; i++) s[A_TEXELS + i] = texel(0x5eed0002u, i);
    for (uint32_t i = 0; i < P_TEXELS; i++) s[A_TEXELS + B_TEXELS + i] = texel(0x5eed0003u, i);
}

static void record(VkCommandBuffer cb, VkBuffer staging, VkBuffer readback, const struct aliased *a,
                   const struct aliased *b)
{
    const VkDeviceSize t = 4;
    /* the layouts first: leaving UNDEFINED may discard the image's contents, so the fill comes after */
    layout(cb, a->image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0, VK_ACCESS_TRANSFER_WRITE_BIT, AL);
    layout(cb, b->image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0, VK_ACCESS_TRANSFER_WRITE_BIT, 1);
    vkCmdFillBuffer(cb, a->alias, 0, VK_WHOLE_SIZE, 0xA5A5A5A5u);
    vkCmdFillBuffer(cb, b->alias, 0, VK_WHOLE_SIZE, 0xA5A5A5A5u);
    barrier_all(cb, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    VkBufferImageCopy up_a = region(0, 0, AL, (VkOffset3D){ 0, 0, 0 }, (VkExtent3D){ AW, AH, 1 });
    VkBufferImageCopy up_b = region(A_TEXELS * t, 0, 1, (VkOffset3D){ 0, 0, 0 }, (VkExtent3D){ BW, BH, BD });
    vkCmdCopyBufferToImage(cb, staging, a->image, VK_IMAGE_LAYOUT_GENERAL, 1, &up_a);
    vkCmdCopyBufferToImage(cb, staging, b->image, VK_IMAGE_LAYOUT_GENERAL, 1, &up_b);
    barrier_all(cb, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    VkBufferImageCopy up_p = region((A_TEXELS + B_TEXELS) * t, 1, 1, (VkOffset3D){ PX, PY, 0 }, (VkExtent3D){ PW, PH, 1 });
    vkCmdCopyBufferToImage(cb, staging, a->image, VK_IMAGE_LAYOUT_GENERAL, 1, &up_p);
    barrier_all(cb, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);

    /* readback: raw A, raw B, rectangle of A, rectangle of B */
    VkBufferCopy raw_a = { 0, 0, a->size }, raw_b = { 0, a->size, b->size };
    vkCmdCopyBuffer(cb, a->alias, readback, 1, &raw_a);
    vkCmdCopyBuffer(cb, b->alias, readback, 1, &raw_b);
    VkDeviceSize rects = a->size + b->size;
    VkBufferImageCopy rd_a = region(rects, 1, 1, (VkOffset3D){ RAX, RAY, 0 }, (VkExtent3D){ RAW_, RAH, 1 });
    VkBufferImageCopy rd_b = region(rects + RA_TEXELS * t, 0, 1, (VkOffset3D){ RBX, RBY, RBZ },
                                    (VkExtent3D){ RBW, RBH, RBD });
    vkCmdCopyImageToBuffer(cb, a->image, VK_IMAGE_LAYOUT_GENERAL, readback, 1, &rd_a);
    vkCmdCopyImageToBuffer(cb, b->image, VK_IMAGE_LAYOUT_GENERAL, readback, 1, &rd_b);
    barrier_all(cb, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT, VK_PIPELINE_STAGE_HOST_BIT);
}

/* the two rectangles against the values written; returns 0 when every texel matches */
static int check_rects(const uint32_t *r)
{
    for (uint32_t y = 0; y < RAH; y++)
        for (uint32_t x = 0; x < RAW_; x++) {
            uint32_t got = r[y * RAW_ + x], want = a_value(RAX + x, RAY + y, 1);
            if (got != want) {
                fprintf(stderr, "FAIL vk_blcopy: A layer 1 (%u, %u) = 0x%08x, wrote 0x%08x\n", RAX + x, RAY + y, got, want);
                return 1;
            }
        }
    const uint32_t *rb = r + RA_TEXELS;
    for (uint32_t z = 0; z < RBD; z++)
        for (uint32_t y = 0; y < RBH; y++)
            for (uint32_t x = 0; x < RBW; x++) {
                uint32_t got = rb[(z * RBH + y) * RBW + x], want = b_value(RBX + x, RBY + y, RBZ + z);
                if (got != want) {
                    fprintf(stderr, "FAIL vk_blcopy: B (%u, %u, %u) = 0x%08x, wrote 0x%08x\n", RBX + x, RBY + y,
                            RBZ + z, got, want);
                    return 1;
                }
            }
    return 0;
}

int main(void)
{
    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "vk_blcopy", 1, "vgtrace", 1,
                              VK_API_VERSION_1_1 };
    VkInstanceCreateInfo ici = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL };
    VkInstance inst;
    VK(vkCreateInstance(&ici, NULL, &inst));
    struct gpu g;
    VkPhysicalDeviceProperties props;
    pick_device(inst, &g, &props);
    printf("INFO vk_blcopy device=\"%s\" queue_family=%u\n", props.deviceName, g.qfam);

    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, g.qfam, 1, &prio };
    VkDeviceCreateInfo dci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qci, 0, NULL, 0, NULL, NULL };
    VK(vkCreateDevice(g.pd, &dci, NULL, &g.dev));
    VkQueue queue;
    vkGetDeviceQueue(g.dev, g.qfam, 0, &queue);

    struct aliased a = aliased_image(&g, VK_IMAGE_TYPE_2D, VK_FORMAT_R8G8B8A8_UINT, (VkExtent3D){ AW, AH, 1 }, AL);
    struct aliased b = aliased_image(&g, VK_IMAGE_TYPE_3D, VK_FORMAT_R32_UINT, (VkExtent3D){ BW, BH, BD }, 1);
    VkDeviceMemory smem, rmem;
    uint32_t *stage, *rb;
    VkDeviceSize ssize = (A_TEXELS + B_TEXELS + P_TEXELS) * 4;
    VkDeviceSize rsize = a.size + b.size + (RA_TEXELS + RB_TEXELS) * 4;
    VkBuffer staging = host_buffer(&g, ssize, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, &smem, (void **)&stage);
    VkBuffer readback = host_buffer(&g, rsize, VK_BUFFER_USAGE_TRANSFER_DST_BIT, &rmem, (void **)&rb);
    fill_staging(stage);
    memset(rb, 0, rsize);

    VkCommandPoolCreateInfo cpoolci = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, g.qfam };
    VkCommandPool cpool;
    VK(vkCreateCommandPool(g.dev, &cpoolci, NULL, &cpool));
    VkCommandBufferAllocateInfo cbai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, cpool,
                                         VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
    VkCommandBuffer cb;
    VK(vkAllocateCommandBuffers(g.dev, &cbai, &cb));
    VkCommandBufferBeginInfo cbbi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                      VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
    VK(vkBeginCommandBuffer(cb, &cbbi));
    record(cb, staging, readback, &a, &b);
    VK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fci = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
    VkFence fence;
    VK(vkCreateFence(g.dev, &fci, NULL, &fence));
    VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
    VK(vkQueueSubmit(queue, 1, &si, fence));
    VK(vkWaitForFences(g.dev, 1, &fence, VK_TRUE, 10ull * 1000 * 1000 * 1000));

    const unsigned char *raw = (const unsigned char *)rb;
    if (check_rects((const uint32_t *)(raw + a.size + b.size))) return 1;
    uint64_t ha = wl_fnv1a64(raw, a.size), hb = wl_fnv1a64(raw + a.size, b.size);
    uint64_t hr = wl_fnv1a64(raw + a.size + b.size, (RA_TEXELS + RB_TEXELS) * 4);

    /* unmapping makes the capture record the read-back memory as observed */
    vkUnmapMemory(g.dev, rmem);
    vkUnmapMemory(g.dev, smem);
    vkDestroyFence(g.dev, fence, NULL);
    vkDestroyCommandPool(g.dev, cpool, NULL);
    vkDestroyBuffer(g.dev, readback, NULL);
    vkDestroyBuffer(g.dev, staging, NULL);
    vkFreeMemory(g.dev, rmem, NULL);
    vkFreeMemory(g.dev, smem, NULL);
    const struct aliased *imgs[2] = { &a, &b };
    for (int i = 0; i < 2; i++) {
        vkDestroyBuffer(g.dev, imgs[i]->alias, NULL);
        vkDestroyImage(g.dev, imgs[i]->image, NULL);
        vkFreeMemory(g.dev, imgs[i]->mem, NULL);
    }
    vkDestroyDevice(g.dev, NULL);
    vkDestroyInstance(inst, NULL);
    printf("RESULT vk_blcopy ok a_bytes=%llu b_bytes=%llu raw_a=%016llx raw_b=%016llx rect=%016llx\n",
           (unsigned long long)a.size, (unsigned long long)b.size, (unsigned long long)ha, (unsigned long long)hb,
           (unsigned long long)hr);
    return 0;
}
