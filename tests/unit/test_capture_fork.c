/* test_capture_fork.c: a fork while another thread holds the shim's pending-map lock (an mmap of an
 * NVIDIA fd taking its pending RM_MAP_MEMORY) must not leave the child with that lock held forever: the
 * child's first close of an NVIDIA fd would hang the captured program.
 *
 * Builds capture/src/shim_fds.c into this test. A helper thread takes the lock and holds it for a while;
 * the main thread forks meanwhile; the child closes an NVIDIA fd (shim_fd_closed takes the lock) under an
 * alarm. Before the fix the child hung until the alarm killed it. */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../capture/src/shim_fds.c"
#include "check.h"

int shim_foreign(void) { return 0; }   /* the only outside symbol shim_fds.c uses */

static pthread_mutex_t ready_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static int holding;

static void *hold_pending(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pending_mu);
    pthread_mutex_lock(&ready_mu);
    holding = 1;
    pthread_cond_signal(&ready_cv);
    pthread_mutex_unlock(&ready_mu);
    struct timespec t = {0, 200 * 1000 * 1000};
    nanosleep(&t, NULL);
    pthread_mutex_unlock(&pending_mu);
    return NULL;
}

int main(void)
{
    shim_fds_init();
    shim_fd_opened(5, "/dev/nvidiactl");
    CHECK(shim_fd_node(5) == SHIM_NODE_CTL, "fd 5 is /dev/nvidiactl");
    pthread_t th;
    if (pthread_create(&th, NULL, hold_pending, NULL) != 0) return 2;
    pthread_mutex_lock(&ready_mu);
    while (!holding) pthread_cond_wait(&ready_cv, &ready_mu);
    pthread_mutex_unlock(&ready_mu);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(3);
        shim_fd_closed(5);
        shim_pending_map m;
        _exit(shim_fd_node(5) == SHIM_NODE_NONE && !shim_fd_take_pending(5, &m) ? 0 : 1);
    }
    CHECK(pid > 0, "fork failed");
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the child %s (status 0x%x): it hung on the pending-map lock held at fork",
          WIFSIGNALED(status) ? "was killed by its alarm" : "failed", status);
    pthread_join(th, NULL);
    shim_fd_closed(5);   /* the parent's lock works too */
    CHECK(shim_fd_node(5) == SHIM_NODE_NONE, "fd 5 closed in the parent");
    return check_finish("test_capture_fork");
}
