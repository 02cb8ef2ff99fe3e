/* test_gpu_nodevice.c: the gpu backend without a GPU (CI, this machine) and its pure parts.
 *  - open fails cleanly, with the sentence users see, when nvidiactl is missing; fds are not leaked;
 *  - a "driver" that answers no ioctl (regular files in place of the nodes) gives an error naming the
 *    ioctl, the class and errno, and leaves nothing open;
 *  - option checks; the op table's probe;
 *  - push-buffer words and GPFIFO entries equal those a standalone probe program ran successfully on
 *    the H200, status and RC names. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../backend/gpu/gpu.h"
#include "vgt/backend.h"
#include "vgt/trace.h"

extern const vgt_backend_ops vgt_backend_gpu;

static int failures;
#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            failures++;                                                   \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
        }                                                                 \
    } while (0)

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void make_dir(char *tmpl)
{
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        exit(2);
    }
}

static void touch(const char *dir, const char *name)
{
    char p[300];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_CREAT | O_RDWR, 0600);
    if (fd < 0) {
        perror(p);
        exit(2);
    }
    close(fd);
}

static void remove_tree(const char *dir)
{
    const char *names[] = { "nvidiactl", "nvidia-uvm", "nvidia0" };
    char p[300];
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void test_missing_nvidiactl(void)
{
    char dir[] = "/tmp/vgt-gpu-nodev-XXXXXX";
    make_dir(dir);
    int fds = count_fds();
    vgt_gpu_options o = { .dev_dir = dir, .no_signal_teardown = true };
    vgt_gpu *g = (vgt_gpu *)1;
    vgt_error err;
    vgt_status st = vgt_gpu_open(&o, &g, &err);
    char want[400];
    snprintf(want, sizeof want, "no NVIDIA GPU: %s/nvidiactl not found", dir);
    CHECK(st == VGT_E_BACKEND, "status %s", vgt_status_name(st));
    CHECK(g == NULL, "session pointer %p left set", (void *)g);
    CHECK(strcmp(err.msg, want) == 0, "message '%s', expected '%s'", err.msg, want);
    CHECK(count_fds() == fds, "%d fds open after, %d before", count_fds(), fds);
    remove_tree(dir);
}

static void test_missing_uvm(void)
{
    char dir[] = "/tmp/vgt-gpu-nodev-XXXXXX";
    make_dir(dir);
    touch(dir, "nvidiactl");
    int fds = count_fds();
    vgt_gpu_options o = { .dev_dir = dir, .no_signal_teardown = true };
    vgt_gpu *g;
    vgt_error err;
    vgt_status st = vgt_gpu_open(&o, &g, &err);
    CHECK(st == VGT_E_BACKEND, "status %s", vgt_status_name(st));
    CHECK(strstr(err.msg, "nvidia-uvm not found") != NULL, "message '%s'", err.msg);
    CHECK(count_fds() == fds, "%d fds open after, %d before", count_fds(), fds);
    remove_tree(dir);
}

/* Regular files accept open() but answer every ioctl with ENOTTY: the first RM escape must fail with
 * a message naming it, and the session must undo the opens. */
static void test_ioctl_refused(void)
{
    char dir[] = "/tmp/vgt-gpu-nodev-XXXXXX";
    make_dir(dir);
    touch(dir, "nvidiactl");
    touch(dir, "nvidia-uvm");
    int fds = count_fds();
    vgt_gpu_options o = { .dev_dir = dir, .no_signal_teardown = true };
    vgt_gpu *g;
    vgt_error err;
    vgt_status st = vgt_gpu_open(&o, &g, &err);
    CHECK(st == VGT_E_BACKEND, "status %s", vgt_status_name(st));
    CHECK(strstr(err.msg, "RM_ALLOC NV01_ROOT_CLIENT (class 0x0041)") != NULL, "message '%s'", err.msg);
    CHECK(strstr(err.msg, "request 0xc020462b") != NULL, "message '%s' lacks the request number", err.msg);
    CHECK(strstr(err.msg, "Inappropriate ioctl") != NULL, "message '%s' lacks errno's text", err.msg);
    CHECK(count_fds() == fds, "%d fds open after, %d before", count_fds(), fds);
    remove_tree(dir);
}

static void test_options(void)
{
    vgt_gpu_options o = { .dev_dir = "/nonexistent", .infra_va = 0x1234, .no_signal_teardown = true };
    vgt_gpu *g;
    vgt_error err;
    vgt_status st = vgt_gpu_open(&o, &g, &err);
    CHECK(st == VGT_E_ARG && strstr(err.msg, "0x1234 is not 4 KiB aligned"), "%s: %s", vgt_status_name(st), err.msg);
    o.infra_va = 0x1000000000000ull;   /* 2^48: 3D context buffers there fault on Hopper */
    st = vgt_gpu_open(&o, &g, &err);
    CHECK(st == VGT_E_ARG && strstr(err.msg, "must lie inside [0x1000, 2^40)"), "%s: %s", vgt_status_name(st), err.msg);
    o.infra_va = VGT_GPU_CHANNEL_VA_LIMIT - VGT_GPU_INFRA_SPAN + VGT_GPU_PAGE;
    st = vgt_gpu_open(&o, &g, &err);
    CHECK(st == VGT_E_ARG, "range ending past 2^40 accepted: %s", vgt_status_name(st));
    o.infra_va = VGT_GPU_CHANNEL_VA_LIMIT - VGT_GPU_INFRA_SPAN;   /* fits: fails later, at the missing node */
    st = vgt_gpu_open(&o, &g, &err);
    CHECK(st == VGT_E_BACKEND && strstr(err.msg, "no NVIDIA GPU"), "%s: %s", vgt_status_name(st), err.msg);
}

static void test_probe(void)
{
    vgt_error err;
    vgt_status st = vgt_backend_gpu.probe(&err);
    if (access("/dev/nvidiactl", F_OK) == 0) {
        printf("note: /dev/nvidiactl exists here; probe returned %s\n", vgt_status_name(st));
        return;
    }
    CHECK(st == VGT_E_UNSUPPORTED, "probe status %s", vgt_status_name(st));
    CHECK(strcmp(err.msg, "no NVIDIA GPU: /dev/nvidiactl not found") == 0, "probe message '%s'", err.msg);
    vgt_backend *b = (vgt_backend *)1;
    st = vgt_backend_gpu.open(&b, NULL, &err);
    CHECK(st == VGT_E_BACKEND && b == NULL, "open: %s, backend %p", vgt_status_name(st), (void *)b);
    CHECK(strcmp(err.msg, "no NVIDIA GPU: /dev/nvidiactl not found") == 0, "open message '%s'", err.msg);
}

static void check_words(const char *what, const uint32_t *got, uint32_t ngot, const uint32_t *want, uint32_t nwant)
{
    CHECK(ngot == nwant, "%s: %u dwords, expected %u", what, ngot, nwant);
    for (uint32_t i = 0; i < ngot && i < nwant; i++)
        CHECK(got[i] == want[i], "%s: dword %u is 0x%08x, expected 0x%08x", what, i, got[i], want[i]);
}

/* Words copied from the probe's log of submissions that passed on the H200 (vgt/pbwriter.h, which the
 * backend writes its own submissions with). */
static void test_pushbuf_words(void)
{
    uint32_t dw[32];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 32);
    vgt_pbw_host_release(&pb, 0x200300040ull, 0xcafe0000u, VGT_PBW_RELEASE_WFI);
    const uint32_t sem[] = { 0x20050017, 0x00300040, 0x00000002, 0xcafe0000, 0x00000000, 0x00100001 };
    check_words("host release", dw, pb.n, sem, 6);

    vgt_pbw_init(&pb, dw, 32);
    vgt_pbw_set_object(&pb, 1, 0xcbc0);
    vgt_pbw_set_object(&pb, 4, 0xc8b5);
    const uint32_t obj[] = { 0x20012000, 0x0000cbc0, 0x20018000, 0x0000c8b5 };
    check_words("set object", dw, pb.n, obj, 4);

    vgt_pbw_init(&pb, dw, 32);
    const uint32_t i2m[4] = { 0x100, 1, 2, 0x00281000 };
    vgt_pbw_inc(&pb, 0, 0x180, i2m, 4);
    vgt_pbw_1(&pb, 0, 0x1b0, 0x11);
    const uint32_t data[2] = { 0x3d000000, 0x3d010203 };
    vgt_pbw_non_inc(&pb, 0, 0x1b4, data, 2);
    const uint32_t want[] = { 0x20040060, 0x100, 1, 2, 0x00281000, 0x2001006c, 0x11, 0x6002006d, 0x3d000000,
                              0x3d010203 };
    check_words("I2M on subchannel 0", dw, pb.n, want, 10);
    vgt_error err;
    CHECK(vgt_pbw_check(&pb, &err) == VGT_OK, "no overflow expected");

    vgt_pbw_init(&pb, dw, 4);
    vgt_pbw_host_release(&pb, 0x1000, 1, VGT_PBW_RELEASE_WFI);
    CHECK(pb.n == 0, "a release that does not fit wrote %u of its dwords into 4", pb.n);
    CHECK(vgt_pbw_check(&pb, &err) == VGT_E_LIMIT, "overflow not reported");
    vgt_pbw_init(&pb, dw, 32);
    vgt_pbw_1(&pb, 8, 0x100, 0);
    CHECK(vgt_pbw_check(&pb, &err) == VGT_E_LIMIT && pb.n == 0, "subchannel 8 accepted");
}

/* Format 1.1 slices: the push buffer that resumes a channel (rm_preamble.c). Header words by hand from
 * clc86f.h's layout: SEC_OP 31:29 (1 INC, 3 NON_INC), COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0. */
static void test_state_pushbuf(void)
{
    uint32_t dw[64];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 64);
    const uint32_t bind[8] = { 0xcb97, 0, 0, 0, 0xc8b5, 0, 0, 0 };
    vgt_gpu_pb_bindings(&pb, bind);
    const vgt_state_method m[] = {
        { 0, 0x0114, 0 }, { 0, 0x0118, 0xa }, { 0, 0x0118, 0xb }, { 0, 0x0118, 0xc },   /* MME upload */
        { 4, 0x0400, 1 }, { 4, 0x0404, 2 }, { 4, 0x0408, 3 },                             /* consecutive */
        { 4, 0x0240, 5 }, { 0, 0x3400, 7 },                                               /* singles */
    };
    uint32_t n = sizeof m / sizeof m[0];
    vgt_gpu_pb_state_methods(&pb, m, n);
    const uint32_t want[] = {
        0x20010000, 0xcb97, 0x20018000, 0xc8b5,       /* SET_OBJECT subch 0, subch 4 */
        0x20020045, 0, 0xa,                          /* INC 0x114..0x118 */
        0x60020046, 0xb, 0xc,                        /* NON_INC 0x118 x2 */
        0x20038100, 1, 2, 3,                         /* INC subch 4 0x400..0x408 */
        0x20018090, 5,                               /* subch 4 0x240 */
        0x20010d00, 7,                               /* subch 0 0x3400 */
    };
    uint32_t nw = sizeof want / sizeof want[0];
    check_words("state push buffer", dw, pb.n, want, nw);
    vgt_error err;
    CHECK(vgt_pbw_check(&pb, &err) == VGT_OK, "no overflow expected");
    CHECK(vgt_gpu_pb_state_bound(n) >= pb.n, "bound %llu below the %u dwords written",
          (unsigned long long)vgt_gpu_pb_state_bound(n), pb.n);

    /* a run longer than a header's COUNT (0x1fff) is split; a write naming subchannel 8 spoils the writer */
    static vgt_state_method many[0x2001];
    static uint32_t big[0x2010];
    for (uint32_t i = 0; i < 0x2001; i++)
        many[i] = (vgt_state_method){ 0, 0x0118, i };
    vgt_pbw_init(&pb, big, 0x2010);
    vgt_gpu_pb_state_methods(&pb, many, 0x2001);
    CHECK(vgt_pbw_check(&pb, &err) == VGT_OK && pb.n == 0x2001 + 2, "split run: %u dwords", pb.n);
    CHECK(big[0] == 0x7fff0046u && big[0x2000] == 0x60020046u && big[0x1fff] == 0x1ffe && big[0x2001] == 0x1fff && big[0x2002] == 0x2000,
          "split headers 0x%08x 0x%08x", big[0], big[0x2000]);
    vgt_pbw_init(&pb, dw, 64);
    const vgt_state_method bad = { 8, 0x0200, 1 };
    vgt_gpu_pb_state_methods(&pb, &bad, 1);
    CHECK(vgt_pbw_check(&pb, &err) == VGT_E_LIMIT && pb.n == 0, "subchannel 8 accepted");
}

static void test_gp_entries(void)
{
    /* From the log: pb VA 0x200010000, 6 dwords, subroutine -> 0x00001a0200010000. */
    uint64_t e = vgt_gpu_gp_entry(0x200010000ull, 6, VGT_GPU_GP_SUBROUTINE);
    CHECK(e == 0x00001a0200010000ull, "entry 0x%016llx", (unsigned long long)e);
    e = vgt_gpu_gp_entry(0x200014000ull, 80, VGT_GPU_GP_SUBROUTINE);
    CHECK(e == 0x0001420200014000ull, "entry 0x%016llx", (unsigned long long)e);
    e = vgt_gpu_gp_entry(0xff12345678ull, 1, VGT_GPU_GP_MAIN | VGT_GPU_GP_SYNC);
    CHECK(e == (0x8000000000000000ull | (1ull << 42) | 0xff12345678ull), "entry 0x%016llx", (unsigned long long)e);
}

static void test_names(void)
{
    CHECK(strcmp(vgt_gpu_rm_status_name(0x56), "NV_ERR_NOT_SUPPORTED") == 0, "0x56 -> %s", vgt_gpu_rm_status_name(0x56));
    CHECK(strcmp(vgt_gpu_rm_status_name(0x12345), "NV_ERR_(unknown)") == 0, "unknown -> %s",
          vgt_gpu_rm_status_name(0x12345));
    CHECK(strstr(vgt_gpu_rc_name(31), "MMU fault") != NULL, "31 -> %s", vgt_gpu_rc_name(31));
    CHECK(strstr(vgt_gpu_rc_name(72), "copy engine") != NULL, "72 -> %s", vgt_gpu_rc_name(72));
    /* The status table comes from the facts (rm_abi.txt, nvstatuscodes.h): the answers the H200 gave
     * the page-table controls, and the first and last entries. */
    static const struct { uint32_t code; const char *name; } st[] = {
        {0x7e, "NV_ERR_TEST_ONLY_CODE_NOT_ENABLED"}, {0x1b, "NV_ERR_INSUFFICIENT_PERMISSIONS"},
        {0x1f, "NV_ERR_INVALID_ARGUMENT"}, {0x28, "NV_ERR_INVALID_EVENT"}, {0x3f, "NV_ERR_INVALID_REQUEST"},
        {0x00, "NV_OK"}, {0x10007, "NV_WARN_NULL_OBJECT"}, {0xffff, "NV_ERR_GENERIC"}};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
        CHECK(strcmp(vgt_gpu_rm_status_name(st[i].code), st[i].name) == 0, "0x%x -> %s, expected %s", st[i].code,
              vgt_gpu_rm_status_name(st[i].code), st[i].name);
    /* Refusals: a control this client may not call, as opposed to one that ran and failed. */
    const char *why = vgt_gpu_rm_refusal(0x7e);
    CHECK(why && strstr(why, "EnableRmTestOnlyCode"), "0x7e -> %s", why ? why : "(none)");
    why = vgt_gpu_rm_refusal(0x1b);
    CHECK(why && strstr(why, "kernel-only"), "0x1b -> %s", why ? why : "(none)");
    CHECK(vgt_gpu_rm_refusal(0x56) != NULL, "NOT_SUPPORTED is a refusal");
    CHECK(vgt_gpu_rm_refusal(0x1f) == NULL, "INVALID_ARGUMENT (a malformed call) is not a refusal");
    CHECK(vgt_gpu_rm_refusal(0x3f) == NULL, "INVALID_REQUEST is not a refusal");
    CHECK(vgt_gpu_rm_refusal(0) == NULL, "NV_OK is not a refusal");
}

/* Where a channel of a capture channel group goes (subctx.c): the captured context shares decide between
 * the peer's subcontext and an async one of its own in the peer's TSG. The shares are corpus facts:
 * CUDA's channels of one group all name 0x5c000016; Vulkan's 3D channel 0xbeec0100 names 0xcef000c0 and
 * its compute channel 0xbeec0104 0xcef000c1 (corpus/vk_triangle.vgt CHANNEL records 1265 and 1273). */
static void test_placement(void)
{
    static const struct {
        const char *what;
        uint32_t share;
        bool needs_sync;
        vgt_gpu_peer peers[3];
        uint32_t npeers;
        vgt_gpu_placement want;
        uint32_t want_peer;
    } cases[] = {
        {"first of its group", 0xcef000c0, true, {{0}}, 0, VGT_GPU_PLACE_OWN_TSG, 0},
        {"Vulkan compute channel beside the 3D one", 0xcef000c1, false, {{0xcef000c0, false}}, 1,
         VGT_GPU_PLACE_SUBCONTEXT, 0},
        {"CUDA: the group's one share", 0x5c000016, false, {{0x5c000016, false}, {0x5c000016, false}}, 2,
         VGT_GPU_PLACE_SHARE, 0},
        {"same share as the second peer", 0xc2, false, {{0xc1, false}, {0xc2, true}}, 2, VGT_GPU_PLACE_SHARE, 1},
        {"no share recorded", 0, false, {{0xc1, false}}, 1, VGT_GPU_PLACE_SHARE, 0},
        {"peer without a recorded share", 0xc2, false, {{0, false}}, 1, VGT_GPU_PLACE_SHARE, 0},
        {"3D channel when a peer already holds VEID 0", 0xc3, true, {{0xc2, true}, {0xc1, false}}, 2,
         VGT_GPU_PLACE_SHARE_SYNC_TAKEN, 1},
        {"3D channel after the compute channel opened the TSG on an async share", 0xcef000c0, true,
         {{0xcef000c1, true}}, 1, VGT_GPU_PLACE_SUBCONTEXT_SYNC, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t peer = 99;
        vgt_gpu_placement p = vgt_gpu_place(cases[i].share, cases[i].needs_sync, cases[i].peers, cases[i].npeers, &peer);
        CHECK(p == cases[i].want && peer == cases[i].want_peer, "%s: placement %d peer %u, expected %d peer %u",
              cases[i].what, (int)p, peer, (int)cases[i].want, cases[i].want_peer);
    }
    CHECK(vgt_gpu_class_needs_sync(VGT_GPU_CLASS_HOPPER_3D) && vgt_gpu_class_needs_sync(VGT_GPU_CLASS_TWOD) &&
          vgt_gpu_class_needs_sync(VGT_GPU_CLASS_I2M), "3D, 2D and I2M need VEID 0");
    CHECK(!vgt_gpu_class_needs_sync(VGT_GPU_CLASS_HOPPER_COMPUTE) && !vgt_gpu_class_needs_sync(VGT_GPU_CLASS_HOPPER_COPY),
          "compute and copy run on an async subcontext");
}

int main(void)
{
    test_missing_nvidiactl();
    test_missing_uvm();
    test_ioctl_refused();
    test_options();
    test_probe();
    test_pushbuf_words();
    test_state_pushbuf();
    test_gp_entries();
    test_names();
    test_placement();
    if (failures) {
        printf("test_gpu_nodevice: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gpu_nodevice: all passed\n");
    return 0;
}
