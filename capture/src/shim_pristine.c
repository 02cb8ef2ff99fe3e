/* shim_pristine.c: CPU mappings of fresh RM memory kept write-protected until their GPU mapping arrives.
 *
 * CUDA maps memory for the CPU before it maps it for the GPU. A memory view (shim_memtrack.c) only forms
 * when both exist, and its initial contents are read then. RM hands memory out zeroed (the six corpus
 * traces' 300 MB of initial contents, read before this rule, were all zero), so a view of memory that
 * nothing has written yet need not be read: it starts from a zero shadow. To know that the CPU wrote
 * nothing between its mapping and the GPU's, the first CPU mapping of fresh memory is write-protected
 * here ("pristine"); a write fault on it breaks the premise (the mapping is made writable again and the
 * later view is read as usual); the GPU mapping claims it.
 *
 * The table is read by the SIGSEGV handler without locks: entries are published with release stores; a
 * broken entry keeps its range (state BROKEN) until the view claims it or the mapping goes, so a racing
 * fault still finds it and retries. */
#include <stdatomic.h>
#include <sys/mman.h>

#include "shim.h"

#define PRISTINE_MAX 256u
enum { FREE = 0, PRISTINE = 1, BROKEN = 2 };

typedef struct pristine {
    _Atomic uintptr_t lo, hi;
    _Atomic int state;
} pristine;

static pristine table[PRISTINE_MAX];

static pristine *find(uintptr_t a)
{
    for (uint32_t i = 0; i < PRISTINE_MAX; i++)
        if (atomic_load_explicit(&table[i].state, memory_order_acquire) != FREE && a >= atomic_load(&table[i].lo) &&
            a < atomic_load(&table[i].hi))
            return &table[i];
    return NULL;
}

void shim_pristine_add(uintptr_t cpu, uint64_t len)
{
    for (uint32_t i = 0; i < PRISTINE_MAX; i++) {
        int expected = FREE;
        if (!atomic_compare_exchange_strong(&table[i].state, &expected, BROKEN)) continue;
        atomic_store(&table[i].lo, cpu);
        atomic_store(&table[i].hi, cpu + len);
        if (g_libc.mprotect((void *)cpu, (size_t)len, PROT_READ) == 0)
            atomic_store_explicit(&table[i].state, PRISTINE, memory_order_release);
        else
            atomic_store(&table[i].state, FREE);
        return;
    }
    /* Table full: the mapping is simply not pristine; its view will be read. */
}

static void release_entry(pristine *p)
{
    if (atomic_exchange(&p->state, BROKEN) == PRISTINE)
        g_libc.mprotect((void *)atomic_load(&p->lo), (size_t)(atomic_load(&p->hi) - atomic_load(&p->lo)),
                        PROT_READ | PROT_WRITE);
    atomic_store(&p->state, FREE);
}

/* Called by the view's region once it is published and protected (shim_memtrack.c), so that a write is
 * seen by one of the two at every moment: 1 when no write reached [lo, hi) since its CPU mapping. The part
 * of the mapping outside the view goes back to writable (nothing tracks it). */
int shim_pristine_claim(uintptr_t cpu, uint64_t len)
{
    pristine *p = find(cpu);
    if (!p) return 0;
    uintptr_t lo = atomic_load(&p->lo), hi = atomic_load(&p->hi);
    int expected = PRISTINE;
    int ok = atomic_compare_exchange_strong(&p->state, &expected, BROKEN);   /* faults now retry */
    if (ok && lo < cpu) g_libc.mprotect((void *)lo, (size_t)(cpu - lo), PROT_READ | PROT_WRITE);
    if (ok && cpu + len < hi) g_libc.mprotect((void *)(cpu + len), (size_t)(hi - cpu - len), PROT_READ | PROT_WRITE);
    atomic_store(&p->state, FREE);
    return ok;
}

/* A write fault at addr: 1 when it was ours (the premise is broken, the mapping writable again; or a
 * claim is unprotecting it right now: retry). A range the program itself made read-only would fault
 * forever: after RETRY_MAX retries of one thread the fault is passed on. */
#define RETRY_MAX 100000
static __thread uint32_t retries;

int shim_pristine_fault(uintptr_t addr)
{
    pristine *p = find(addr);
    if (!p) return 0;
    int expected = PRISTINE;
    if (atomic_compare_exchange_strong(&p->state, &expected, BROKEN)) {
        g_libc.mprotect((void *)atomic_load(&p->lo), (size_t)(atomic_load(&p->hi) - atomic_load(&p->lo)),
                        PROT_READ | PROT_WRITE);
        retries = 0;
        return 1;
    }
    return ++retries < RETRY_MAX;
}

void shim_pristine_drop(uintptr_t cpu, uint64_t len)
{
    for (uint32_t i = 0; i < PRISTINE_MAX; i++)
        if (atomic_load(&table[i].state) != FREE && atomic_load(&table[i].lo) < cpu + len && cpu < atomic_load(&table[i].hi))
            release_entry(&table[i]);
}

void shim_pristine_forget_all(void)
{
    for (uint32_t i = 0; i < PRISTINE_MAX; i++)
        if (atomic_load(&table[i].state) != FREE) release_entry(&table[i]);
}
