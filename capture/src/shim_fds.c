/* shim_fds.c: which file descriptors are NVIDIA device nodes, and the RM_MAP_MEMORY that waits for the
 * mmap of its fd (NVOS33's wrapper names the fd to mmap; nvidia-rm-userspace.md §1, probes/README.md:
 * sysmem through a fresh /dev/nvidiactl fd, BAR memory through /dev/nvidiaN). Fixed tables, no malloc:
 * these are read on every open/close/ioctl/mmap. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

static _Atomic uint8_t fd_nodes[SHIM_FD_MAX];
static shim_pending_map pending[SHIM_FD_MAX];
static pthread_mutex_t pending_mu = PTHREAD_MUTEX_INITIALIZER;

static char ctl_path[4096];   /* VGT_CAPTURE_CTL_PATH, read once at load */

/* fork() copies pending_mu as it is: held by another thread (an mmap taking its pending map) at that
 * moment, it would stay locked forever in the child, whose first close or mmap of an NVIDIA fd would then
 * hang. So fork waits for it, and the child starts with a fresh one. Registered at load, before the
 * capture registers its own at its first open, this prepare runs after the capture's mutexes are taken:
 * pending_mu is never held while waiting for another lock, so any order is safe. */
static void fork_prepare(void) { pthread_mutex_lock(&pending_mu); }
static void fork_parent(void) { pthread_mutex_unlock(&pending_mu); }
static void fork_child(void) { pthread_mutex_init(&pending_mu, NULL); }

void shim_fds_init(void)
{
    const char *p = getenv("VGT_CAPTURE_CTL_PATH");
    if (p && *p && strlen(p) < sizeof ctl_path) strcpy(ctl_path, p);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int shim_node_of_path(const char *path)
{
    if (path && ctl_path[0] && strcmp(path, ctl_path) == 0) return SHIM_NODE_CTL;
    if (!path || strncmp(path, "/dev/nvidia", 11) != 0) return SHIM_NODE_NONE;
    const char *rest = path + 11;
    if (strcmp(rest, "ctl") == 0) return SHIM_NODE_CTL;
    if (strcmp(rest, "-uvm") == 0) return SHIM_NODE_UVM;
    if (*rest >= '0' && *rest <= '9') {
        while (*rest >= '0' && *rest <= '9') rest++;
        return *rest == 0 ? SHIM_NODE_GPU : SHIM_NODE_NONE;
    }
    return SHIM_NODE_NONE;   /* nvidia-uvm-tools, nvidia-caps/..., nvidia-modeset: not captured */
}

int shim_fd_node(int fd)
{
    return fd >= 0 && fd < SHIM_FD_MAX ? atomic_load_explicit(&fd_nodes[fd], memory_order_relaxed) : SHIM_NODE_NONE;
}

void shim_fd_opened(int fd, const char *path)
{
    if (fd < 0 || fd >= SHIM_FD_MAX || shim_foreign()) return;
    atomic_store(&fd_nodes[fd], (uint8_t)shim_node_of_path(path));
    pthread_mutex_lock(&pending_mu);
    pending[fd].valid = 0;
    pthread_mutex_unlock(&pending_mu);
}

void shim_fd_dup(int oldfd, int newfd)
{
    if (newfd < 0 || newfd >= SHIM_FD_MAX) return;
    int node = shim_fd_node(oldfd);
    if ((node == SHIM_NODE_NONE && shim_fd_node(newfd) == SHIM_NODE_NONE) || shim_foreign()) return;
    atomic_store(&fd_nodes[newfd], (uint8_t)node);
}

void shim_fd_closed(int fd)
{
    if (fd < 0 || fd >= SHIM_FD_MAX || shim_foreign()) return;
    atomic_store(&fd_nodes[fd], SHIM_NODE_NONE);
    pthread_mutex_lock(&pending_mu);
    pending[fd].valid = 0;
    pthread_mutex_unlock(&pending_mu);
}

void shim_fd_set_pending(int fd, const shim_pending_map *m)
{
    if (fd < 0 || fd >= SHIM_FD_MAX) return;
    pthread_mutex_lock(&pending_mu);
    pending[fd] = *m;
    pending[fd].valid = 1;
    pthread_mutex_unlock(&pending_mu);
}

int shim_fd_take_pending(int fd, shim_pending_map *m)
{
    if (fd < 0 || fd >= SHIM_FD_MAX) return 0;
    pthread_mutex_lock(&pending_mu);
    int ok = pending[fd].valid;
    if (ok) *m = pending[fd];
    pending[fd].valid = 0;
    pthread_mutex_unlock(&pending_mu);
    return ok;
}
