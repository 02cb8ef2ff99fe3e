/* qmd.h: compute Queue Meta Data (QMD) decoding, Volta..Hopper.
 *
 * A QMD is the 256-byte (V02_xx, V03_00) or 384-byte (V04_00) descriptor a compute launch points at.
 * The layout depends on the QMD version, which every version stores at the same place (major 583:580,
 * minor 579:576), so the version is read from the QMD itself, never guessed from the class.
 *
 * Facts: NVIDIA open-gpu-doc classes/compute/clc3c0qmd.h (V02_02), clc5c0qmd.h (V02_03),
 * clc6c0qmd.h and clc7c0qmd.h (V03_00), clcbc0qmd.h (V04_00); transcribed as bit ranges into our own
 * field tables (analyze/src/qmd_v02.c, qmd_v03.c, qmd_v04.c). Bit numbers count from bit 0 of dword 0,
 * little-endian, as in those headers ("MW(hi:lo)").
 *
 *     vgt_qmd q; vgt_error err;
 *     if (vgt_qmd_decode(bytes, 384, &q, &err) == VGT_OK) printf("%u x %u x %u\n", q.grid[0], q.grid[1], q.grid[2]);
 */
#ifndef VGT_QMD_H
#define VGT_QMD_H

#include <stdint.h>

#include "vgt/error.h"
#include "vgt/nv_facts.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VGT_QMD_MAX_BYTES 384u       /* V04_00; older versions are 256 bytes */
#define VGT_QMD_MAX_CB 8u            /* constant buffer slots 0..7 */
#define VGT_QMD_MAX_RELEASE 3u       /* release semaphores 0..2 (V03_00 and later have 3) */
#define VGT_QMD_MAX_DEPENDENT 2u     /* dependent QMDs 0..1 (V04_00 has 2 with pointers, V03_00 one) */

typedef enum vgt_qmd_version {
    VGT_QMD_UNKNOWN = VGT_NV_QMD_NONE,
    VGT_QMD_V02_02 = VGT_NV_QMD_V02_02,   /* Volta C3C0 (Mesa writes it on Turing too) */
    VGT_QMD_V02_03 = VGT_NV_QMD_V02_03,   /* Turing C5C0 */
    VGT_QMD_V03_00 = VGT_NV_QMD_V03_00,   /* Ampere C6C0/C7C0 (a compute class's QMD trait: vgt_nv_class_qmd) */
    VGT_QMD_V04_00 = VGT_NV_QMD_V04_00,   /* Hopper CBC0 */
} vgt_qmd_version;

typedef struct vgt_qmd_cb {
    uint8_t valid;
    uint64_t va;              /* byte address (V04_00 stores it >> 6; already shifted back) */
    uint32_t size;            /* bytes (stored >> 4; already shifted back) */
} vgt_qmd_cb;

typedef struct vgt_qmd_release {
    uint8_t enabled;
    uint8_t payload64;        /* 64-bit payload (V03_00+); V02 releases are 32-bit */
    uint8_t structure_size;   /* raw STRUCTURE_SIZE field (V02: 0 four words, 1 one word; V03+: 0 four, 1 one, 2 two) */
    uint8_t reduction_enable;
    uint8_t reduction_op;     /* 0 ADD 1 MIN 2 MAX 3 INC 4 DEC 5 AND 6 OR 7 XOR */
    uint8_t reduction_format; /* 0 unsigned 32, 1 signed 32 */
    uint64_t va;
    uint64_t payload;
} vgt_qmd_release;

/* A QMD acted on when this one completes (DEPENDENT_QMD*_ fields): how CUDA orders a stream's grids on
 * Hopper (corpus/vadd.vgt: each kernel's QMD decrements the dependence of a CTA-less QMD, which schedules
 * the next kernel's QMD). */
typedef struct vgt_qmd_dependent {
    uint8_t enabled;
    uint8_t action;           /* 0 INCREMENT_PUT, 1 SCHEDULE, 3 INVALIDATE_COPY_SCHEDULE, 4 DECREMENT_DEPENDENCE */
    uint8_t prefetch;
    uint64_t va;              /* the dependent QMD (stored >> 8, as SEND_PCAS_A; already shifted back) */
} vgt_qmd_dependent;

typedef struct vgt_qmd {
    vgt_qmd_version version;
    uint8_t major, minor;     /* as stored */
    uint32_t size;            /* bytes the layout covers: 256 or 384 */
    uint32_t grid[3];         /* CTA_RASTER_WIDTH/HEIGHT/DEPTH (GRID_* on V04) */
    uint32_t block[3];        /* CTA_THREAD_DIMENSION0/1/2 */
    uint64_t program_va;      /* PROGRAM_ADDRESS_LOWER | UPPER << 32 */
    uint32_t program_offset;  /* V02_02 only: PROGRAM_OFFSET (relative to the code base); 0 elsewhere */
    uint32_t shared_memory;   /* SHARED_MEMORY_SIZE, bytes */
    uint32_t register_count;  /* REGISTER_COUNT_V (V02/V03), REGISTER_COUNT (V04) */
    uint32_t barrier_count;
    uint32_t sass_version;
    uint32_t local_memory_low, local_memory_high;  /* SHADER_LOCAL_MEMORY_LOW/HIGH_SIZE, bytes */
    uint64_t program_prefetch_va;   /* PROGRAM_PREFETCH_ADDR_LOWER/UPPER_SHIFTED (stored >> 8; shifted back); V02_03+ */
    uint32_t program_prefetch_size; /* PROGRAM_PREFETCH_SIZE, as stored */
    uint32_t cb_valid_mask;   /* bit i = cb[i].valid */
    vgt_qmd_cb cb[VGT_QMD_MAX_CB];
    uint32_t release_count;   /* slots this version has: 2 (V02) or 3 (V03, V04) */
    vgt_qmd_release release[VGT_QMD_MAX_RELEASE];
    vgt_qmd_dependent dependent[VGT_QMD_MAX_DEPENDENT];
} vgt_qmd;

/* "INCREMENT_PUT", "SCHEDULE", "INVALIDATE_COPY_SCHEDULE", "DECREMENT_DEPENDENCE"; "?" otherwise. */
const char *vgt_qmd_dependent_action_name(unsigned action);
#define VGT_QMD_DEP_INCREMENT_PUT 0u
#define VGT_QMD_DEP_SCHEDULE 1u
#define VGT_QMD_DEP_INVALIDATE_COPY_SCHEDULE 3u
#define VGT_QMD_DEP_DECREMENT_DEPENDENCE 4u

/* REQUIRE_SCHEDULING_PCAS of a QMD (V03_00 bit 140, V04_00 bit 30; older versions have none: 0): such a
 * QMD does not run on its scheduling PCAS alone, it also waits to be scheduled by the dependent-QMD action
 * of a QMD that completes before it. CUDA graphs on Hopper chain their kernel nodes that way: each node's
 * QMD is sent once with a PCAS, and every launch of the graph schedules only the first (CTA-less) QMD;
 * the rest run through DEPENDENT_QMD SCHEDULE actions. Facts: open-gpu-doc clcbc0qmd.h
 * (NVCBC0_QMDV03_00_REQUIRE_SCHEDULING_PCAS MW(140:140), NVCBC0_QMDV04_00_REQUIRE_SCHEDULING_PCAS MW(30:30)). */
int vgt_qmd_requires_scheduling_pcas(vgt_qmd_version v, const uint8_t *qmd, uint32_t len);

/* One field of a version's table: what the decoder reads, with the source's name and bit range. Array
 * fields (count > 1) repeat at lo + i * stride. Printers and tests use the table; so does the decoder. */
typedef struct vgt_qmd_field {
    const char *name;         /* e.g. "CTA_RASTER_WIDTH", "CONSTANT_BUFFER_VALID" */
    uint16_t hi, lo;          /* inclusive bit range of element 0, hi - lo < 64 */
    uint16_t count, stride;   /* array shape; count 1 for scalars */
    uint16_t first;           /* index of element 0 (RELEASE2 sits apart from RELEASE0/1 in V03_00) */
    uint16_t role;            /* internal: which vgt_qmd member it fills */
    const char *meaning;
} vgt_qmd_field;

/* The version a QMD declares (major/minor at bits 583:576), or VGT_QMD_UNKNOWN. len must cover 584 bits. */
vgt_qmd_version vgt_qmd_detect(const uint8_t *qmd, uint32_t len);
const char *vgt_qmd_version_name(vgt_qmd_version v);       /* "V04_00"; "unknown" */
uint32_t vgt_qmd_version_size(vgt_qmd_version v);          /* 256, 384; 0 for unknown */

/* Decode with the version the QMD declares. VGT_E_DECODE (naming major/minor) for an unknown version;
 * VGT_E_TRUNCATED when len is shorter than the version's size. Fields never read past len. */
vgt_status vgt_qmd_decode(const uint8_t *qmd, uint32_t len, vgt_qmd *out, vgt_error *err);
/* Decode with a given layout regardless of the stored version (for a class's known QMD version). */
vgt_status vgt_qmd_decode_as(vgt_qmd_version v, const uint8_t *qmd, uint32_t len, vgt_qmd *out, vgt_error *err);

/* The field table of a version (NULL, *count 0 for unknown). */
const vgt_qmd_field *vgt_qmd_fields(vgt_qmd_version v, uint32_t *count);

/* Every field of the version's table as "NAME=value" (arrays as "NAME(i)=value", only non-zero elements),
 * comma separated, hex for addresses and payloads: the full dump a register-database printer gives.
 * Returns the full length (snprintf style); the text is truncated at cap. */
int vgt_qmd_format_fields(vgt_qmd_version v, const uint8_t *qmd, uint32_t len, char *buf, uint32_t cap);

/* ---- encoding (qmd_encode.c): the inverse of decoding, from the same field tables ----
 *
 * A fresh QMD of version v: every field of the version's table written from q (addresses shifted as the
 * layout stores them), major/minor from v, on top of `unnamed` (may be NULL: zeros): the bits of a QMD
 * that no table field names (cache invalidations, SM configuration, QMD type...), which a launch
 * description carries verbatim from the captured QMD (vgt_qmd_unnamed). out receives
 * vgt_qmd_version_size(v) bytes. VGT_E_ARG, naming the field and element, when a value does not fit its
 * field or loses bits to the layout's shift (a V04_00 constant buffer not 64-byte aligned, a size not a
 * multiple of 16, a dependent QMD not 256-byte aligned, a 64-bit payload in a V02 QMD): nothing that
 * decodes differently from q is ever produced. So decode(encode(q)) == q for every q that encodes. */
vgt_status vgt_qmd_encode(vgt_qmd_version v, const vgt_qmd *q, const uint8_t *unnamed, uint8_t *out, uint32_t len,
                          vgt_error *err);
/* The bits of qmd no field of v's table names: qmd with every table field cleared (out: the version's size). */
void vgt_qmd_unnamed(vgt_qmd_version v, const uint8_t *qmd, uint32_t len, uint8_t *out);
/* 1 when a and b decode to the same launch (every member a table fills); *what names the first
 * difference ("grid", "cb[3].va", ...) when they differ (may be NULL). */
int vgt_qmd_equal(const vgt_qmd *a, const vgt_qmd *b, const char **what);

/* Bits hi..lo (hi - lo < 64) of a little-endian bit array of len bytes; bits past len read as 0. */
uint64_t vgt_qmd_bits(const uint8_t *qmd, uint32_t len, unsigned hi, unsigned lo);
/* The inverse, for tests and synthetic generators: store v into bits hi..lo (bits past len are dropped). */
void vgt_qmd_set_bits(uint8_t *qmd, uint32_t len, unsigned hi, unsigned lo, uint64_t v);

#ifdef __cplusplus
}
#endif
#endif
