/* rm_teardown.c: sessions left open are torn down at exit (atexit) and on fatal or terminating
 * signals. The signal path may use syscalls only: it frees each session's root client (RM frees every
 * object below it, which stops its channels), closes the fds (UVM drops the VA space with its fd), then
 * restores the previous handler and re-raises the signal so the process ends as it would have.
 * The exit path runs the full vgt_gpu_close(). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "gpu_internal.h"

#define REGISTRY_SLOTS 8

static vgt_gpu *volatile registry[REGISTRY_SLOTS];
static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
#define NSIGNALS (sizeof handled_signals / sizeof handled_signals[0])
static struct sigaction previous[NSIGNALS];
static int installed;

static void emergency_close(vgt_gpu *g)
{
    if (g->client && g->fd_ctl >= 0) {
        rm_free_params a = { .client = g->client, .object = g->client };
        (void)ioctl(g->fd_ctl, RM_REQUEST(RM_ESC_FREE, sizeof a), &a);
    }
    int *fds[] = { &g->fd_dev, &g->fd_uvm_mm, &g->fd_uvm, &g->fd_ctl };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (*fds[i] >= 0)
            close(*fds[i]);
}

static void on_signal(int sig)
{
    for (int i = 0; i < REGISTRY_SLOTS; i++) {
        vgt_gpu *g = registry[i];
        registry[i] = NULL;
        if (g)
            emergency_close(g);
    }
    for (size_t i = 0; i < NSIGNALS; i++)
        if (handled_signals[i] == sig)
            sigaction(sig, &previous[i], NULL);
    raise(sig);
}

static void at_exit(void)
{
    for (int i = 0; i < REGISTRY_SLOTS; i++)
        if (registry[i])
            vgt_gpu_close(registry[i]);
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NSIGNALS; i++) {
        sigaction(handled_signals[i], &sa, &previous[i]);
        if (previous[i].sa_handler == SIG_IGN)   /* an ignored signal stays ignored */
            sigaction(handled_signals[i], &previous[i], NULL);
    }
    atexit(at_exit);
    installed = 1;
}

void teardown_register(vgt_gpu *g)
{
    if (!installed)
        install();
    for (int i = 0; i < REGISTRY_SLOTS; i++)
        if (!registry[i]) {
            registry[i] = g;
            g->registry_slot = i;
            return;
        }
    gpu_log(g, "teardown registry full (%d sessions): this session is freed only by vgt_gpu_close", REGISTRY_SLOTS);
}

void teardown_unregister(vgt_gpu *g)
{
    if (g->registry_slot >= 0)
        registry[g->registry_slot] = NULL;
    g->registry_slot = -1;
}
