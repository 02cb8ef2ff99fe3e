/* bench_hooks.c: what the capture's hooks cost per call, without a GPU. Run under `vgt record` with
 * VGT_CAPTURE_CTL_PATH naming CTL (a plain file standing in for /dev/nvidiactl: the capture starts at its
 * open, as at a real first open) and without the capture; bench/capture/hooks.sh prints the difference.
 *
 *   bench_hooks CTL [N]   prints one line: ns per call of each loop, N calls each (default 20000):
 *     control     an RM_CONTROL escape on CTL with a 256-byte params block (the real call fails with
 *                 ENOTTY on a plain file; the capture still copies the params and records the call)
 *     control_big the same with a 64 KiB params block
 *     mmap_ctl    mmap + munmap of one page of CTL (a CPU_MAP and CPU_UNMAP record each)
 *     munmap_anon mmap + munmap of an anonymous page (the program's own memory: nothing recorded)
 *     open_close  open + close of /dev/null (not an NVIDIA node)
 *     ioctl_other an ioctl on /dev/null (not an NVIDIA node) */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* NVOS54 as the RM escape takes it: hClient, hObject, cmd, flags, params, paramsSize, status. */
struct control { uint32_t client, object, cmd, flags; uint64_t params; uint32_t size, status; };
#define REQ(nr, size) ((unsigned long)((3u << 30) | ((uint32_t)(size) << 16) | (0x46u << 8) | (uint32_t)(nr)))

static void controls(int fd, uint32_t n, uint32_t psize)
{
    uint8_t *params = calloc(1, psize);
    struct control c = { .client = 0xc1d00001, .object = 0x5c000001, .cmd = 0x20800101,
                         .params = (uint64_t)(uintptr_t)params, .size = psize };
    for (uint32_t i = 0; i < n; i++) {
        params[0] = (uint8_t)i;
        if (ioctl(fd, REQ(0x2a, sizeof c), &c) == 12345) abort();
    }
    free(params);
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: bench_hooks CTL [N]\n"); return 2; }
    uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 20000;
    int fd = open(argv[1], O_RDWR);
    if (fd < 0) { perror(argv[1]); return 2; }
    if (ftruncate(fd, 4096) != 0) { perror("ftruncate"); return 2; }
    int null = open("/dev/null", O_RDWR);
    uint64_t t[7];
    t[0] = now_ns();
    controls(fd, n, 256);
    t[1] = now_ns();
    controls(fd, n / 10 ? n / 10 : 1, 64u << 10);
    t[2] = now_ns();
    for (uint32_t i = 0; i < n; i++) {
        void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) { perror("mmap"); return 2; }
        munmap(p, 4096);
    }
    t[3] = now_ns();
    for (uint32_t i = 0; i < n; i++) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        munmap(p, 4096);
    }
    t[4] = now_ns();
    for (uint32_t i = 0; i < n; i++) close(open("/dev/null", O_RDONLY));
    t[5] = now_ns();
    for (uint32_t i = 0; i < n; i++) { int v; ioctl(null, FIONREAD, &v); }
    t[6] = now_ns();
    uint32_t big = n / 10 ? n / 10 : 1;
    printf("control=%.0f control_big=%.0f mmap_ctl=%.0f munmap_anon=%.0f open_close=%.0f ioctl_other=%.0f\n",
           (double)(t[1] - t[0]) / n, (double)(t[2] - t[1]) / big, (double)(t[3] - t[2]) / n,
           (double)(t[4] - t[3]) / n, (double)(t[5] - t[4]) / n, (double)(t[6] - t[5]) / n);
    close(fd);
    return 0;
}
