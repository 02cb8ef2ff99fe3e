/* fake_gpu.h: the software GPU dressed as a hardware backend for the engine's tests: asynchronous (the
 * engine waits for it as for the H200) and without a write log (checks compare whole observed ranges, as
 * on the H200). Tests override the operations they watch after fake_gpu_from_sim. */
#ifndef VGT_TEST_FAKE_GPU_H
#define VGT_TEST_FAKE_GPU_H

#include "vgt/backend.h"

static uint32_t fake_gpu_caps(void) { return (vgt_backend_sim.caps() & ~VGT_CAP_WRITE_LOG) | VGT_CAP_ASYNC; }

static inline vgt_backend_ops fake_gpu_from_sim(const char *name)
{
    vgt_backend_ops b = vgt_backend_sim;
    if (name) b.name = name;
    b.caps = fake_gpu_caps;
    b.produced = NULL;
    b.write_log = NULL;
    b.write_log_reset = NULL;
    return b;
}

#endif
