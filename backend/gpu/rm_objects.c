/* rm_objects.c: the session's fixed objects, in the order the driver needs them (probe log
 * rmchan-h200.log steps 1-3): device nodes, root client, UVM initialisation, the card, NV01_DEVICE_0,
 * NV20_SUBDEVICE_0, NV01_MEMORY_VIRTUAL (the handle RM_MAP_MEMORY_DMA maps through), the class list,
 * the usermode page (doorbell), FERMI_VASPACE_A owned by UVM, the GPU UUID, UVM_REGISTER_GPU and
 * UVM_REGISTER_GPU_VASPACE (which must precede any context share: probe fact 2). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpu_internal.h"

static vgt_status open_nodes(vgt_gpu *g, vgt_error *err)
{
    VGT_TRY(node_open(g, "nvidiactl", &g->fd_ctl, err));
    VGT_TRY(node_open(g, "nvidia-uvm", &g->fd_uvm, err));
    return node_open(g, "nvidia-uvm", &g->fd_uvm_mm, err);
}

static vgt_status init_uvm(vgt_gpu *g, vgt_error *err)
{
    uvm_initialize_params ui = { 0 };
    VGT_TRY(uvm_call(g, g->fd_uvm, UVM_REQ_INITIALIZE, &ui, &ui.status, "INITIALIZE", err));
    /* The second fd ties the VA space to our mm; CUDA and tinygrad tolerate a failure here. */
    uvm_mm_initialize_params mi = { .uvm_fd = g->fd_uvm };
    vgt_error ignored;
    if (uvm_call(g, g->fd_uvm_mm, UVM_REQ_MM_INITIALIZE, &mi, &mi.status, "MM_INITIALIZE", &ignored) != VGT_OK)
        gpu_log(g, "UVM MM_INITIALIZE refused (tolerated): %s", ignored.msg);
    return VGT_OK;
}

static vgt_status find_card(vgt_gpu *g, vgt_error *err)
{
    static rm_card_info cards[RM_CARD_INFO_ENTRIES];
    VGT_TRY(rm_read_cards(g, cards, RM_CARD_INFO_ENTRIES, err));
    for (uint32_t i = 0; i < RM_CARD_INFO_ENTRIES; i++) {
        const rm_card_info *c = &cards[i];
        if (!c->valid)
            continue;
        g->info.pci_domain = c->pci_domain;
        g->info.pci_bus = c->pci_bus;
        g->info.pci_slot = c->pci_slot;
        g->info.pci_function = c->pci_function;
        g->info.vendor_id = c->vendor_id;
        g->info.device_id = c->device_id;
        g->info.minor = c->minor_number;
        g->gpu_id = c->gpu_id;
        return VGT_OK;
    }
    return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "no NVIDIA GPU: CARD_INFO lists no valid card (%u entries read)",
                    RM_CARD_INFO_ENTRIES);
}

static vgt_status open_root(vgt_gpu *g, vgt_error *err)
{
    VGT_TRY(rm_alloc(g, 0, RM_CLASS_ROOT_CLIENT, NULL, 0, "NV01_ROOT_CLIENT", &g->client, err));
    VGT_TRY(init_uvm(g, err));
    VGT_TRY(find_card(g, err));
    VGT_TRY(rm_open_registered_dev(g, &g->fd_dev, err));
    rm_id_info_v2 id = { .gpu_id = g->gpu_id };
    VGT_TRY(rm_control(g, g->client, RM_CTRL_ROOT_GET_ID_INFO_V2, &id, sizeof id, "GPU_GET_ID_INFO_V2", err));
    g->device_instance = id.device_instance;
    return VGT_OK;
}

static vgt_status read_classes(vgt_gpu *g, vgt_error *err)
{
    static rm_classlist_v2 cl;
    memset(&cl, 0, sizeof cl);
    VGT_TRY(rm_control(g, g->device, RM_CTRL_DEV_GET_CLASSLIST_V2, &cl, sizeof cl, "GPU_GET_CLASSLIST_V2", err));
    if (cl.count > RM_CLASSLIST_V2_MAX)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "GPU_GET_CLASSLIST_V2: %u classes, the limit is %u", cl.count,
                        RM_CLASSLIST_V2_MAX);
    g->info.nclasses = cl.count;
    memcpy(g->info.classes, cl.classes, cl.count * sizeof cl.classes[0]);
    return VGT_OK;
}

/* The newest usermode class the GPU lists; its page holds the doorbell. */
static vgt_status open_usermode(vgt_gpu *g, vgt_error *err)
{
    static const uint32_t preference[] = { RM_CLASS_HOPPER_USERMODE, RM_CLASS_AMPERE_USERMODE,
                                           RM_CLASS_TURING_USERMODE };
    for (size_t i = 0; i < sizeof preference / sizeof preference[0] && !g->info.usermode_class; i++)
        if (vgt_gpu_has_class(g, preference[i]))
            g->info.usermode_class = preference[i];
    if (!g->info.usermode_class)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET,
                        "the GPU lists no usermode class (0xc661, 0xc561 or 0xc461): no doorbell");
    VGT_TRY(rm_alloc(g, g->subdevice, g->info.usermode_class, NULL, 0, "usermode page", &g->usermode, err));
    return rm_map_cpu(g, g->usermode, USERMODE_SIZE, true, "usermode page", &g->usermode_cpu, err);
}

static vgt_status open_device(vgt_gpu *g, vgt_error *err)
{
    rm_device_alloc d = { .device_id = g->device_instance, .client_share = g->client };
    VGT_TRY(rm_alloc(g, g->client, RM_CLASS_DEVICE, &d, sizeof d, "NV01_DEVICE_0", &g->device, err));
    rm_subdevice_alloc s = { 0 };
    VGT_TRY(rm_alloc(g, g->device, RM_CLASS_SUBDEVICE, &s, sizeof s, "NV20_SUBDEVICE_0", &g->subdevice, err));
    rm_memvirt_alloc v = { .limit = 0x1ffffffffffffull };
    VGT_TRY(rm_alloc(g, g->device, RM_CLASS_MEMORY_VIRTUAL, &v, sizeof v, "NV01_MEMORY_VIRTUAL", &g->virtmem, err));
    VGT_TRY(read_classes(g, err));
    return open_usermode(g, err);
}

static vgt_status open_vaspace(vgt_gpu *g, vgt_error *err)
{
    rm_vaspace_alloc va = { .flags = RM_VASPACE_FLAG_PAGE_FAULTING | RM_VASPACE_FLAG_EXTERNALLY_OWNED,
                            .va_base = RM_VASPACE_BASE, .va_size = RM_VASPACE_SIZE };
    VGT_TRY(rm_alloc(g, g->device, RM_CLASS_VASPACE, &va, sizeof va, "FERMI_VASPACE_A (UVM-owned)", &g->vaspace, err));
    rm_gid_info gid = { .flags = RM_GID_FLAGS_BINARY, .length = 16 };
    VGT_TRY(rm_control(g, g->subdevice, RM_CTRL_SUBDEV_GET_GID_INFO, &gid, sizeof gid, "GPU_GET_GID_INFO", err));
    if (gid.length < 16)
        return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "GPU_GET_GID_INFO: UUID of %u bytes, expected 16", gid.length);
    memcpy(g->info.uuid, gid.data, 16);

    uvm_register_gpu_params rg = { .rm_ctrl_fd = -1 };
    memcpy(rg.uuid, g->info.uuid, 16);
    VGT_TRY(uvm_call(g, g->fd_uvm, UVM_REQ_REGISTER_GPU, &rg, &rg.status, "REGISTER_GPU", err));
    g->uvm_gpu = true;
    memcpy(g->info.uuid, rg.uuid, 16);   /* the UUID UVM knows the GPU by from now on */

    uvm_register_vaspace_params rv = { .rm_ctrl_fd = g->fd_ctl, .client = g->client, .va_space = g->vaspace };
    memcpy(rv.uuid, g->info.uuid, 16);
    VGT_TRY(uvm_call(g, g->fd_uvm, UVM_REQ_REGISTER_GPU_VASPACE, &rv, &rv.status, "REGISTER_GPU_VASPACE", err));
    g->uvm_vaspace = true;
    return VGT_OK;
}

static void read_driver_version(vgt_gpu *g)
{
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f)
        return;
    if (fgets(g->info.driver, sizeof g->info.driver, f))
        g->info.driver[strcspn(g->info.driver, "\n")] = 0;
    fclose(f);
}

vgt_status objects_open(vgt_gpu *g, vgt_error *err)
{
    VGT_TRY(open_nodes(g, err));
    read_driver_version(g);
    VGT_TRY(open_root(g, err));
    VGT_TRY(open_device(g, err));
    return open_vaspace(g, err);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

void objects_close(vgt_gpu *g)
{
    vgt_error ignored;
    if (g->usermode_cpu)
        munmap((void *)g->usermode_cpu, USERMODE_SIZE);
    g->usermode_cpu = NULL;
    uvm_uuid_params u = { 0 };
    memcpy(u.uuid, g->info.uuid, 16);
    if (g->uvm_vaspace)
        uvm_call(g, g->fd_uvm, UVM_REQ_UNREGISTER_GPU_VASPACE, &u, &u.status, "UNREGISTER_GPU_VASPACE", &ignored);
    u.status = 0;
    if (g->uvm_gpu)
        uvm_call(g, g->fd_uvm, UVM_REQ_UNREGISTER_GPU, &u, &u.status, "UNREGISTER_GPU", &ignored);
    g->uvm_vaspace = g->uvm_gpu = false;
    if (g->client)
        rm_free(g, 0, g->client, "root client (and every object below it)", &ignored);
    g->client = 0;
    close_fd(&g->fd_dev);
    close_fd(&g->fd_uvm_mm);
    close_fd(&g->fd_uvm);
    close_fd(&g->fd_ctl);
}

bool vgt_gpu_has_class(const vgt_gpu *g, uint32_t cls)
{
    for (uint32_t i = 0; i < g->info.nclasses; i++)
        if (g->info.classes[i] == cls)
            return true;
    return false;
}
