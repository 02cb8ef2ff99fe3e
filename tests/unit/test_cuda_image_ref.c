/* test_cuda_image_ref.c: CUDA images referenced by file (format 1.5): the capture's lookup of the file
 * behind an address (a file mmapped into this process, as a shared library's fatbin is), a fatbin's entry
 * list, the image read back from its file and checked against its hash (what lane 3 and verify do), and
 * the record's round trip through the writer and reader. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include "vgt/capture.h"
#include "vgt/cuda.h"
#include "vgt/trace.h"

#include "check.h"

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* A fatbin of two entries: an sm_90 cubin of 200 bytes (compressed) and sm_80 PTX of 100; returns its size. */
static size_t make_fatbin(uint8_t *b)
{
    memset(b, 0, 16 + 2 * 64 + 300);
    put32(b, 0xBA55ED50u), put16(b + 4, 1), put16(b + 6, 16), put64(b + 8, 2 * 64 + 300);
    uint8_t *e = b + 16;
    put16(e, 2), put32(e + 4, 64), put64(e + 8, 200), put32(e + 28, 90), put64(e + 40, 0x2000 | 1);
    memset(e + 64, 0xCB, 200);
    e += 64 + 200;
    put16(e, 1), put32(e + 4, 64), put64(e + 8, 100), put32(e + 28, 80), put64(e + 40, 1);
    memset(e + 64, 'p', 100);
    return 16 + 2 * 64 + 300;
}

static void test_fatbin_entries(void)
{
    uint8_t fb[1024], out[4 * VGT_CUDA_FATBIN_ENTRY_SIZE];
    size_t n = make_fatbin(fb);
    CHECK(vgt_cuda_fatbin_entries(fb, n, out, 4) == 2, "two entries");
    vgt_rec_cuda_image_ref r = {.entries = out, .entries_length = 2 * VGT_CUDA_FATBIN_ENTRY_SIZE};
    vgt_cuda_fatbin_entry a = vgt_cuda_image_ref_entry(&r, 0), b = vgt_cuda_image_ref_entry(&r, 1);
    CHECK(a.kind == VGT_CUDA_IMAGE_CUBIN && a.arch == 90 && a.size == 200 && a.flags == VGT_CUDA_FATBIN_COMPRESSED,
          "entry 0: sm_90 cubin 200 compressed (%u %u %u %u)", a.kind, a.arch, a.size, a.flags);
    CHECK(b.kind == VGT_CUDA_IMAGE_PTX && b.arch == 80 && b.size == 100 && b.flags == 0, "entry 1: sm_80 ptx 100");
    char text[256];
    vgt_cuda_image_ref_entries_text(&r, text, sizeof text);
    CHECK(!strcmp(text, "sm_90 cubin 200 B (compressed), sm_80 ptx 100 B"), "entries text: %s", text);
    CHECK(vgt_cuda_fatbin_entries(fb, n - 1, out, 4) == 0, "a fatbin cut short has no entries");
    CHECK(vgt_cuda_fatbin_entries("\x7f" "ELF....", 8, out, 4) == 0, "an ELF is no fatbin");
}

/* The lookup finds a file mapped into this process at the right offset, and nothing for anonymous memory. */
static void test_mapped_file(const char *path, const uint8_t *content, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open %s", path);
    /* map from the second page of the file, as a loader maps a segment */
    uint8_t *m = mmap(NULL, size - (size_t)page, PROT_READ, MAP_PRIVATE, fd, page);
    CHECK(m != MAP_FAILED, "mmap");
    close(fd);
    char got[4096], real[4096];
    uint64_t off = 0;
    CHECK(vgt_capture_mapped_file(NULL, (uint64_t)(uintptr_t)(m + 100), 1000, got, sizeof got, &off),
          "the address is in a mapped file");
    CHECK(realpath(path, real) && !strcmp(got, real), "its path: %s (want %s)", got, real);
    CHECK(off == (uint64_t)page + 100, "its offset %llu", (unsigned long long)off);
    CHECK(!memcmp(content + off, m + 100, 1000), "the file's bytes there are the memory's");
    CHECK(!vgt_capture_mapped_file(NULL, (uint64_t)(uintptr_t)(m + 100), size, got, sizeof got, &off),
          "a range running past the mapping is not in the file");
    CHECK(!vgt_capture_mapped_file(NULL, (uint64_t)(uintptr_t)(m + 100), 1000, got, 4, &off),
          "a path that does not fit is no answer");
    uint8_t *anon = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(!vgt_capture_mapped_file(NULL, (uint64_t)(uintptr_t)anon, 16, got, sizeof got, &off), "anonymous memory");
    uint8_t *heap = malloc(64);
    CHECK(!vgt_capture_mapped_file(NULL, (uint64_t)(uintptr_t)heap, 64, got, sizeof got, &off), "the heap");
    free(heap);
    munmap(anon, (size_t)page);
    munmap(m, size - (size_t)page);
}

static void test_load(const char *path, const uint8_t *content, size_t size)
{
    (void)size;
    uint64_t off = 5000, len = 3000;
    vgt_rec_cuda_image_ref r = {.hash = XXH64(content + off, len, 0), .file_offset = off, .image_length = (uint32_t)len,
                                .kind = VGT_CUDA_IMAGE_FATBIN, .path = path, .path_length = (uint32_t)strlen(path)};
    vgt_error e;
    uint8_t *b = NULL;
    CHECK(vgt_cuda_image_ref_load(&r, &b, &e) == VGT_OK, "the file's bytes hash right: %s", e.msg);
    CHECK(b && !memcmp(b, content + off, len) && b[len] == 0, "the bytes, and a NUL after");
    free(b);
    r.file_offset++;
    CHECK(vgt_cuda_image_ref_load(&r, &b, &e) == VGT_E_CHECKSUM && !b, "other bytes are refused");
    char want[64];
    snprintf(want, sizeof want, "0x%016llx", (unsigned long long)r.hash);
    CHECK(strstr(e.msg, want) && strstr(e.msg, path), "the refusal names the image and the file: %s", e.msg);
    r.file_offset = size - 10;
    CHECK(vgt_cuda_image_ref_load(&r, NULL, &e) == VGT_E_TRUNCATED, "a file that ends first");
    r.file_offset = off;
    /* A decoded record's path is followed by the fatbin entries, not by a NUL: only path_length counts. */
    char unterminated[600];
    snprintf(unterminated, sizeof unterminated, "%s\x02junk", path);
    r.path = unterminated;
    CHECK(vgt_cuda_image_ref_load(&r, NULL, &e) == VGT_OK, "a path followed by other bytes: %s", e.msg);
    r.path_length = (uint32_t)strlen(unterminated);
    CHECK(vgt_cuda_image_ref_load(&r, NULL, &e) == VGT_E_NOT_FOUND, "the longer name is another file");
    r.path_length = 4096;
    CHECK(vgt_cuda_image_ref_load(&r, NULL, &e) == VGT_E_FORMAT, "a path over the limit is refused: %s", e.msg);
    r.path = "/nonexistent/libtorch_cuda.so";
    r.path_length = (uint32_t)strlen(r.path);
    CHECK(vgt_cuda_image_ref_load(&r, NULL, &e) == VGT_E_NOT_FOUND && strstr(e.msg, r.path), "an absent file");
}

static void test_roundtrip(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/ref.vgt", dir);
    uint8_t fb[1024], ent[4 * VGT_CUDA_FATBIN_ENTRY_SIZE];
    uint32_t ne = vgt_cuda_fatbin_entries(fb, make_fatbin(fb), ent, 4);
    vgt_writer_options o = vgt_writer_defaults();
    vgt_writer *w;
    vgt_error e;
    CHECK(vgt_writer_open_path(&w, path, &o, NULL, 0, &e) == VGT_OK, "open writer: %s", e.msg);
    vgt_rec_cuda_image_ref r = {.hash = 0x1234, .file_offset = 77, .file_size = 9999, .image_length = 444,
                                .kind = VGT_CUDA_IMAGE_FATBIN, .path = "/usr/lib/libk.so", .path_length = 16,
                                .entries = ent, .entries_length = ne * VGT_CUDA_FATBIN_ENTRY_SIZE};
    CHECK(vgt_write_cuda_image_ref(w, 1, &r, &e) == VGT_OK, "write");
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close");
    vgt_reader *rd;
    vgt_reader_options ro = {.verify_checksums = 1};
    CHECK(vgt_reader_open_path(&rd, path, &ro, &e) == VGT_OK, "open reader");
    CHECK(vgt_reader_info(rd)->minor == 5, "writers write 1.5");
    vgt_record rec;
    CHECK(vgt_reader_next(rd, &rec, &e) == VGT_OK && rec.type == VGT_REC_CUDA_IMAGE_REF, "the record");
    vgt_rec_cuda_image_ref g;
    CHECK(vgt_decode_cuda_image_ref(&rec, &g, &e) == VGT_OK, "decode: %s", e.msg);
    CHECK(g.hash == 0x1234 && g.file_offset == 77 && g.file_size == 9999 && g.image_length == 444 &&
          g.kind == VGT_CUDA_IMAGE_FATBIN && g.path_length == 16 && !memcmp(g.path, "/usr/lib/libk.so", 16) &&
          g.entries_length == 32 && vgt_cuda_image_ref_entry(&g, 1).arch == 80, "fields round-trip");
    vgt_reader_close(rd);
    remove(path);
}

int main(void)
{
    char dir[] = "/tmp/vgt_imgref_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[512];
    snprintf(path, sizeof path, "%s/libkernels.so", dir);
    size_t size = 6 * (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *content = malloc(size);
    for (size_t i = 0; i < size; i++) content[i] = (uint8_t)(i * 131 + (i >> 8));
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(content, 1, size, f) == size && fclose(f) == 0, "write %s", path);
    test_fatbin_entries();
    test_mapped_file(path, content, size);
    test_load(path, content, size);
    test_roundtrip(dir);
    remove(path);
    rmdir(dir);
    free(content);
    return check_finish("test_cuda_image_ref");
}
