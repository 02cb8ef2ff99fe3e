/* unavailable.h: the table entries of backends this build does not have (unavailable.c). */
#ifndef VGT_BACKEND_UNAVAILABLE_H
#define VGT_BACKEND_UNAVAILABLE_H

#include "vgt/backend.h"

extern const vgt_backend_ops vgt_backend_cuda_unavailable;

#endif
