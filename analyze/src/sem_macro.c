/* sem_macro.c: the methods an MME macro call emitted, fed to a channel's semantic tracker as the GPU
 * executes them: at the call's position in the stream, with origin MACRO (events.h). The NVIDIA drivers
 * issue draws and compute dispatches from macros (corpus/vk_compute.vgt: LOAD_INLINE_QMD_DATA emitted by
 * a macro), so counting only push-buffer methods misses them. */
#include "sem_internal.h"
#include "vgt/mme_trace.h"

vgt_status vgt_sem_macro_call(vgt_sem_tracker *t, const struct vgt_mme_trace_call *call, vgt_error *err)
{
    vgt_method m = { 0 };
    m.subch = call->subch;
    m.cls = call->cls;
    m.kind = VGT_HDR_INC;
    m.pos = call->pos;
    vgt_sem_begin_macro(t, call->id);
    vgt_status rc = VGT_OK;
    for (uint32_t i = 0; i < call->nemits && rc == VGT_OK; i++) {
        m.mthd = call->emits[i].method;
        m.data = call->emits[i].value;
        m.is_host = vgt_nv_is_host_method(m.mthd);
        m.first = i == 0;
        rc = vgt_sem_method(t, &m, err);
    }
    vgt_sem_end_macro(t);
    return rc;
}
