/* cuda_image.c: how long a module image is, given only the address the program passed to cuModuleLoadData
 * and friends. The driver knows from the bytes themselves; so do we:
 *  - a fatbinary: header {u32 magic 0xBA55ED50, u16 version, u16 header_size, u64 fat_size}, the image is
 *    header_size + fat_size bytes (CUDA's fatbinary.h);
 *  - a fatbinary wrapper {u32 magic 0x466243B1, u32 version, const u64 *data, ...} (fatbinary_section.h,
 *    what nvcc emits and cuModuleLoadFatBinary takes): the fatbinary is at data;
 *  - an ELF cubin: the furthest of the section header table, the program header table and every section's
 *    bytes (ELF64, little-endian: Elf64_Ehdr e_phoff 32, e_shoff 40, e_phentsize 54, e_phnum 56,
 *    e_shentsize 58, e_shnum 60; Elf64_Shdr sh_type 4, sh_offset 24, sh_size 32; SHT_NOBITS 8);
 *  - otherwise PTX text, NUL-terminated.
 * Sizes above 1 GiB are refused (0: unknown). */
#include <string.h>

#include "cuda_cap.h"

#define IMAGE_MAX (1ull << 30)

static uint64_t u64at(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t u32at(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint16_t u16at(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

static uint64_t fatbin_size(const uint8_t *p)
{
    uint64_t n = (uint64_t)u16at(p + 6) + u64at(p + 8);
    return n >= 16 && n <= IMAGE_MAX ? n : 0;
}

static uint64_t elf_size(const uint8_t *p)
{
    if (p[4] != 2 || p[5] != 1) return 0;   /* ELFCLASS64, little-endian */
    uint64_t phoff = u64at(p + 32), shoff = u64at(p + 40);
    uint64_t phent = u16at(p + 54), phnum = u16at(p + 56), shent = u16at(p + 58), shnum = u16at(p + 60);
    if (shoff > IMAGE_MAX || phoff > IMAGE_MAX || (shnum && shent < 64)) return 0;
    uint64_t end = 64;
    if (phnum && phoff + phent * phnum > end) end = phoff + phent * phnum;
    if (shnum && shoff + shent * shnum > end) end = shoff + shent * shnum;
    for (uint64_t i = 0; i < shnum; i++) {
        const uint8_t *sh = p + shoff + i * shent;
        if (u32at(sh + 4) == 8) continue;
        uint64_t off = u64at(sh + 24), size = u64at(sh + 32);
        if (off > IMAGE_MAX || size > IMAGE_MAX) return 0;
        if (off + size > end) end = off + size;
    }
    return end <= IMAGE_MAX ? end : 0;
}

uint64_t cu_image_size(const void *image, const void **data, uint32_t *kind)
{
    const uint8_t *p = image;
    *data = image;
    *kind = VGT_CUDA_IMAGE_UNKNOWN;
    if (!p) return 0;
    uint32_t magic = u32at(p);
    if (magic == 0x466243B1u) {   /* the wrapper: follow it to the fatbinary */
        const uint8_t *fb;
        memcpy(&fb, p + 8, sizeof fb);
        if (!fb || u32at(fb) != 0xBA55ED50u) return 0;
        *data = fb;
        *kind = VGT_CUDA_IMAGE_FATBIN;
        return fatbin_size(fb);
    }
    if (magic == 0xBA55ED50u) {
        *kind = VGT_CUDA_IMAGE_FATBIN;
        return fatbin_size(p);
    }
    if (!memcmp(p, "\x7f" "ELF", 4)) {
        *kind = VGT_CUDA_IMAGE_CUBIN;
        return elf_size(p);
    }
    *kind = VGT_CUDA_IMAGE_PTX;
    size_t n = strnlen((const char *)p, IMAGE_MAX);
    return n < IMAGE_MAX ? n + 1 : 0;
}
