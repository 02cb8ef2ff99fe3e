/* cuda_image_ref.c: images referenced by file (CUDA_IMAGE_REF, format 1.5): a fatbin's entry list, and the
 * image read back from its file and checked against its hash.
 *
 * A fatbin (CUDA's fatbinary.h, fields as nvcc writes them): a 16-byte header {u32 magic 0xBA55ED50,
 * u16 version, u16 header_size, u64 fat_size}, then entries back to back, each a header followed by its
 * payload: {u16 kind (1 PTX, 2 ELF), u16 version, u32 header_size, u64 payload_size, u32 compressed_size,
 * u32 -, u16 minor, u16 major, u32 arch, u32 name_offset, u32 name_length, u64 flags (0x2000: the payload
 * is compressed), ...}: the next entry starts header_size + payload_size bytes after this one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "le.h"
#include "vgt/cuda.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define ENTRY_HEADER_MIN 48u            /* up to and including the flags */
#define ENTRY_FLAG_COMPRESSED 0x2000ull

uint32_t vgt_cuda_fatbin_entries(const void *image, uint64_t len, uint8_t *out, uint32_t max)
{
    const uint8_t *p = image;
    if (!p || len < 16 || le_get32(p) != FATBIN_MAGIC) return 0;
    uint64_t end = (uint64_t)le_get16(p + 6) + le_get64(p + 8), at = le_get16(p + 6);
    if (end > len) return 0;
    uint32_t n = 0;
    while (at + ENTRY_HEADER_MIN <= end) {
        const uint8_t *e = p + at;
        uint32_t hsize = le_get32(e + 4);
        uint64_t psize = le_get64(e + 8);
        if (hsize < ENTRY_HEADER_MIN || psize > end || at + hsize + psize > end) return 0;
        if (out && n < max) {
            uint16_t k = le_get16(e);
            uint32_t kind = k == 1 ? VGT_CUDA_IMAGE_PTX : k == 2 ? VGT_CUDA_IMAGE_CUBIN : VGT_CUDA_IMAGE_UNKNOWN;
            uint32_t flags = le_get64(e + 40) & ENTRY_FLAG_COMPRESSED ? VGT_CUDA_FATBIN_COMPRESSED : 0;
            uint8_t *o = out + (size_t)n * VGT_CUDA_FATBIN_ENTRY_SIZE;
            le_put32(o, kind);
            le_put32(o + 4, le_get32(e + 28));
            le_put32(o + 8, psize > UINT32_MAX ? UINT32_MAX : (uint32_t)psize);
            le_put32(o + 12, flags);
        }
        n++;
        at += hsize + psize;
    }
    return n;
}

vgt_cuda_fatbin_entry vgt_cuda_image_ref_entry(const vgt_rec_cuda_image_ref *r, uint32_t i)
{
    vgt_cuda_fatbin_entry e = {0};
    if (!r->entries || (uint64_t)(i + 1) * VGT_CUDA_FATBIN_ENTRY_SIZE > r->entries_length) return e;
    const uint8_t *p = r->entries + (size_t)i * VGT_CUDA_FATBIN_ENTRY_SIZE;
    e.kind = le_get32(p), e.arch = le_get32(p + 4), e.size = le_get32(p + 8), e.flags = le_get32(p + 12);
    return e;
}

void vgt_cuda_image_ref_entries_text(const vgt_rec_cuda_image_ref *r, char *buf, size_t n)
{
    if (!n) return;
    buf[0] = 0;
    size_t used = 0;
    for (uint32_t i = 0; i < r->entries_length / VGT_CUDA_FATBIN_ENTRY_SIZE && used < n; i++) {
        vgt_cuda_fatbin_entry e = vgt_cuda_image_ref_entry(r, i);
        int k = snprintf(buf + used, n - used, "%ssm_%u %s %u B%s", i ? ", " : "", e.arch,
                         vgt_cuda_image_kind_name(e.kind), e.size,
                         e.flags & VGT_CUDA_FATBIN_COMPRESSED ? " (compressed)" : "");
        if (k < 0) break;
        used += (size_t)k;
    }
}

vgt_status vgt_cuda_image_ref_load(const vgt_rec_cuda_image_ref *r, uint8_t **bytes, vgt_error *err)
{
    if (bytes) *bytes = NULL;
    /* A decoded record's path points into the record, followed by the entries: it is path_length bytes,
     * not a C string (reading on made open() look for "lib.so\x02..." and fail with ENOENT). */
    char path[4096];
    if (r->path_length >= sizeof path || (r->path_length && !r->path) ||
        memchr(r->path ? r->path : "", 0, r->path_length))
        return VGT_FAIL(err, VGT_E_FORMAT, 0, "CUDA image 0x%016llx is referenced, not stored: its path (%u "
                        "bytes) is not a file name", (unsigned long long)r->hash, r->path_length);
    memcpy(path, r->path ? r->path : "", r->path_length);
    path[r->path_length] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return VGT_FAIL(err, VGT_E_NOT_FOUND, 0, "CUDA image 0x%016llx is referenced, not stored: its file %s "
                        "cannot be opened (%s)", (unsigned long long)r->hash, path, strerror(errno));
    uint8_t *buf = malloc((size_t)r->image_length + 1);
    if (!buf) {
        close(fd);
        return VGT_FAIL(err, VGT_E_NOMEM, 0, "CUDA image 0x%016llx: %u bytes", (unsigned long long)r->hash,
                        r->image_length);
    }
    uint64_t got = 0;
    while (got < r->image_length) {
        ssize_t k = pread(fd, buf + got, r->image_length - got, (off_t)(r->file_offset + got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (uint64_t)k;
    }
    close(fd);
    if (got < r->image_length) {
        free(buf);
        return VGT_FAIL(err, VGT_E_TRUNCATED, 0, "CUDA image 0x%016llx is referenced, not stored: %s ends before "
                        "its %u bytes at offset %llu (the file changed since the capture)",
                        (unsigned long long)r->hash, path, r->image_length, (unsigned long long)r->file_offset);
    }
    uint64_t h = XXH64(buf, r->image_length, 0);
    if (h != r->hash) {
        free(buf);
        return VGT_FAIL(err, VGT_E_CHECKSUM, 0, "CUDA image 0x%016llx is referenced, not stored: the %u bytes at "
                        "offset %llu of %s hash to 0x%016llx (the file changed since the capture)",
                        (unsigned long long)r->hash, r->image_length, (unsigned long long)r->file_offset, path,
                        (unsigned long long)h);
    }
    buf[r->image_length] = 0;
    if (bytes) *bytes = buf;
    else free(buf);
    return VGT_OK;
}
