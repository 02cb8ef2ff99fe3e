/* rm_abi.h: the user-space ABI of the NVIDIA kernel driver (RM escapes and UVM ioctls) for backend/gpu.
 *
 * The facts are the ABI table below every part, trace-format/facts/rm_abi.txt (request numbers, control
 * ids, object classes, parameter layouts with every offset and size checked at compile time, USERD and
 * usermode offsets, each citing the open-gpu-kernel-modules / open-gpu-doc file it was read from), which
 * capture and the trace model read too. No NVIDIA header is included or copied.
 */
#ifndef VGT_GPU_RM_ABI_H
#define VGT_GPU_RM_ABI_H

#include "vgt/nv_abi.h"

#endif
