/* capture_mapfile.c: the file behind an address of this process, from its maps file (proc(5)):
 *     START-END PERMS OFFSET DEV INODE PATH
 * A CUDA image the program hands the driver by address (PyTorch's fatbins: the .nv_fatbin section of
 * libtorch_cuda.so, mapped from the library) can be named by file, offset and hash instead of copied
 * (CUDA_IMAGE_REF). The caller checks the file's bytes against the image's hash before it trusts the
 * answer: the mapping may be private and written to (relocations), or the file replaced since. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vgt/capture.h"

int vgt_capture_mapped_file(const char *maps_path, uint64_t addr, uint64_t size, char *path, size_t n,
                            uint64_t *offset)
{
    FILE *f = fopen(maps_path ? maps_path : "/proc/self/maps", "re");
    if (!f || !n) {
        if (f) fclose(f);
        return 0;
    }
    char line[4096 + 256];
    uint64_t want = addr, end_at = addr + size, next_off = 0;
    int found = 0, ok = 0;
    while (fgets(line, sizeof line, f)) {
        uint64_t start, end, off;
        char perms[8];
        int pathpos = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms, &off, &pathpos) < 4
            || !pathpos)
            continue;
        char *p = line + pathpos;
        p[strcspn(p, "\n")] = 0;
        if (!found) {
            if (want < start || want >= end) continue;
            if (p[0] != '/' || strstr(p, " (deleted)") || strlen(p) >= n) break;
            snprintf(path, n, "%s", p);
            *offset = off + (want - start);
            found = 1;
        } else if (start != want || strcmp(p, path) || off != next_off) {
            break;   /* a gap, another file, or the same file at another offset */
        }
        if (end_at <= end) {
            ok = 1;
            break;
        }
        next_off = off + (end - start);
        want = end;
    }
    fclose(f);
    if (!ok && n) path[0] = 0;
    return ok;
}
