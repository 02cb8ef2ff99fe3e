/* cuda_nodefn.c: the function of a graph's kernel node that the program never looked up (cuda_cap.h).
 *
 * The CUDA runtime finds its kernels with cuLibraryGetKernel and launches the CUkernel as if it were a
 * CUfunction. Launched into a stream being captured, the driver turns the CUkernel into the context's
 * CUfunction itself (as cuKernelGetFunction would, but without calling the entry point), and that is the
 * function cuGraphKernelNodeGetParams answers at instantiation: a handle no record of the trace has looked
 * up, so that a replay could not know which image and name it is. Before the node's record, the owner is
 * found here and written as a CUDA_FUNCTION record of api cuGraphInstantiate:
 *   1. the node's CUkernel, when the driver gave one that the program looked up;
 *   2. the CUkernel, among those the program looked up (by the function's name where cuFuncGetName, CUDA
 *      12.3, tells it), whose cuKernelGetFunction is this function;
 *   3. the module (cuFuncGetModule) when the program loaded it, else the library whose cuLibraryGetModule
 *      is that module, with the name from cuFuncGetName;
 *   4. the one CUkernel the program looked up by that name, when there is exactly one (the driver could
 *      not tell, but no other image has a kernel of that name).
 * Only driver queries, no wrapped entry point: nothing is recorded for them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cap.h"

#define U64(p) ((uint64_t)(uintptr_t)(p))
/* Without a name, the CUkernels tried (cuKernelGetFunction may load each into the context): the newest. */
#define MAX_CANDIDATES 256u

typedef CUresult (*func_name_fn)(const char **, CUfunction);
typedef CUresult (*kernel_function_fn)(CUfunction *, CUkernel);
typedef CUresult (*func_module_fn)(CUmodule *, CUfunction);
typedef CUresult (*library_module_fn)(CUmodule *, CUlibrary);

/* The CUkernel the program looked up whose function in the current context is func; 0 if none. */
static uint64_t kernel_of(uint64_t func, const char *name)
{
    kernel_function_fn get = (kernel_function_fn)cu_lib_sym("cuKernelGetFunction");
    uint64_t *cand = get ? malloc(MAX_CANDIDATES * sizeof *cand) : NULL;
    if (!cand) return 0;
    uint32_t n = cu_owner_list(CU_OWNER_KERNEL, name, cand, MAX_CANDIDATES);
    uint64_t found = 0;
    for (uint32_t i = 0; i < n && !found; i++) {
        CUfunction f = NULL;
        if (get(&f, (CUkernel)(uintptr_t)cand[i]) == CUDA_SUCCESS && U64(f) == func) found = cand[i];
    }
    free(cand);
    return found;
}

/* The load (module, or library through its module) that holds func; 0 if none of the program's. */
static uint64_t load_of(uint64_t func)
{
    func_module_fn fmod = (func_module_fn)cu_lib_sym("cuFuncGetModule");
    CUmodule m = NULL;
    if (!fmod || fmod(&m, (CUfunction)(uintptr_t)func) != CUDA_SUCCESS || !m) return 0;
    if (cu_owner_kind(U64(m)) == CU_OWNER_LOAD) return U64(m);
    library_module_fn lmod = (library_module_fn)cu_lib_sym("cuLibraryGetModule");
    uint64_t loads[MAX_CANDIDATES];
    uint32_t n = lmod ? cu_owner_list(CU_OWNER_LOAD, NULL, loads, MAX_CANDIDATES) : 0;
    for (uint32_t i = 0; i < n; i++) {
        CUmodule lm = NULL;
        if (lmod(&lm, (CUlibrary)(uintptr_t)loads[i]) == CUDA_SUCCESS && lm == m) return loads[i];
    }
    return 0;
}

void cu_node_function(const cu_call *c, uint64_t func, uint64_t kern)
{
    if (!c->rec || !func || cu_owner_kind(func) >= 0) return;
    func_name_fn fname = (func_name_fn)cu_lib_sym("cuFuncGetName");
    const char *n = NULL;
    char name[512] = "";
    if (fname && fname(&n, (CUfunction)(uintptr_t)func) == CUDA_SUCCESS && n) snprintf(name, sizeof name, "%s", n);
    uint64_t owner = kern && cu_owner_kind(kern) == CU_OWNER_KERNEL ? kern : 0;
    if (!owner) owner = kernel_of(func, name[0] ? name : NULL);
    if (owner && !name[0]) {
        const char *kn = cu_owner_name(owner);
        if (kn) snprintf(name, sizeof name, "%s", kn);
    }
    if (!owner && name[0]) owner = load_of(func);
    uint64_t only[2];
    if (!owner && name[0] && cu_owner_list(CU_OWNER_KERNEL, name, only, 2) == 1) owner = only[0];
    if (!owner) {
        if (shim_first_time(0xC0DA400000000000ull ^ func))
            shim_problem(1, VGT_E_UNSUPPORTED, "cuGraphInstantiate: kernel node function %p (%s) belongs to no module, "
                         "library or kernel the program looked up: a replay cannot run this graph",
                         (void *)(uintptr_t)func, name[0] ? name : "name unknown");
        return;
    }
    cu_owner_set(func, owner, 0, name[0] ? name : NULL, CU_OWNER_FUNCTION);
    vgt_rec_cuda_function f = {.call = c->head, .function = func, .owner = owner,
                               .name_length = (uint32_t)strlen(name), .name = name};
    cu_write(VGT_REC_CUDA_FUNCTION, &f);
}
