/* unavailable.c: the `cuda` backend as this build has it: registered in the table so that
 * `--backend cuda` gives a clear reason instead of "unknown backend". The libcuda backend (lane 3)
 * comes with a later issue. */
#include "unavailable.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Whether the NVIDIA control node exists, for the message: "no GPU found" and "not in this build" are
 * different problems for the user. */
static const char *nvidiactl_state(void)
{
    if (access("/dev/nvidiactl", R_OK | W_OK) == 0) return "/dev/nvidiactl is present";
    return errno == ENOENT ? "no GPU found: /dev/nvidiactl does not exist" : "no usable GPU: /dev/nvidiactl is not accessible";
}

static vgt_status cuda_probe(vgt_error *err)
{
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET,
                    "backend cuda: not available in this build (lane 3 through libcuda comes with a later issue); %s",
                    nvidiactl_state());
}

static uint32_t cuda_caps(void) { return VGT_CAP_SHADERS | VGT_CAP_LANE_CUDA; }

static vgt_status cuda_open(vgt_backend **b, const vgt_backend_config *cfg, vgt_error *err)
{
    *b = NULL;
    return cuda_probe(err);
}

const vgt_backend_ops vgt_backend_cuda_unavailable = {
    .name = "cuda",
    .summary = "CUDA-level replay through libcuda (not in this build)",
    .probe = cuda_probe,
    .caps = cuda_caps,
    .open = cuda_open,
};
