/* classes.h: NVIDIA class tables (host, 3D, compute, copy, inline-to-memory, 2D) as data.
 *
 * The tables live in the .cls files in trace-format/facts/classes/, one file per class, in our own line format
 * (described in trace-format/facts/README.md); trace-format/facts/gen_classes.py turns them into C at build
 * time: these decoding tables (names, fields, enums), and, below every part, the method constants and
 * class families of vgt/nv_facts.h. A new class is a data change: drop a .cls file there and rebuild.
 *
 * Lookups are O(1): each class carries a dense index over its method space (0x0000..0x3ffc), so
 * (class, method address) -> (method, array index) is one table read.
 *
 *     const vgt_class *c = vgt_class_find(0xC86F);
 *     char buf[256];
 *     vgt_method_format(0xC86F, 0x006c, 0x01000001, buf, sizeof buf);
 *     // "SEM_EXECUTE = OPERATION=RELEASE, ACQUIRE_SWITCH_TSG=DIS, RELEASE_WFI=DIS, PAYLOAD_SIZE=64BIT, ..."
 */
#ifndef VGT_CLASSES_H
#define VGT_CLASSES_H

#include <stddef.h>
#include <stdint.h>

#include "vgt/nv_facts.h"
#include "vgt/nv_pushbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A class's family (vgt_nv_family: the facts' lookups, vgt_nv_class_family, know classes without a table too). */
typedef enum vgt_class_kind {
    VGT_CLASS_UNKNOWN = VGT_NV_FAM_NONE,
    VGT_CLASS_HOST = VGT_NV_FAM_HOST,      /* channel GPFIFO class: host (PBDMA) methods < 0x100 */
    VGT_CLASS_3D = VGT_NV_FAM_3D,
    VGT_CLASS_COMPUTE = VGT_NV_FAM_COMPUTE,
    VGT_CLASS_COPY = VGT_NV_FAM_COPY,
    VGT_CLASS_I2M = VGT_NV_FAM_I2M,        /* inline-to-memory */
    VGT_CLASS_2D = VGT_NV_FAM_2D,
} vgt_class_kind;

#define VGT_CLASS_FIELD_FLOAT 1u   /* the field's bits are an IEEE-754 single (31:0) */
#define VGT_CLASS_FIELD_SIGNED 2u  /* two's complement */

typedef struct vgt_class_enum {
    uint32_t value;
    const char *name;
} vgt_class_enum;

typedef struct vgt_class_field {
    const char *name;
    uint8_t hi, lo;               /* bit range hi:lo within the method's 32-bit data */
    uint8_t flags;                /* VGT_CLASS_FIELD_* */
    uint16_t enum_count;
    const vgt_class_enum *enums;  /* in table order; the first name of a value wins when formatting */
} vgt_class_field;

typedef struct vgt_method_info {
    uint32_t offset;              /* byte address of element 0 */
    const char *name;
    uint16_t count;               /* array elements; 1 for a scalar method */
    uint16_t stride;              /* bytes between elements; 0 for a scalar method */
    uint16_t field_count;
    const vgt_class_field *fields;
} vgt_method_info;

#define VGT_CLASS_METHOD_SPACE VGT_NV_METHOD_SPACE   /* method addresses are 12-bit dword indices */

typedef struct vgt_class {
    uint32_t id;                  /* e.g. 0xCB97 */
    const char *name;             /* e.g. "HOPPER_A" */
    vgt_class_kind kind;
    const char *source;           /* where the facts come from (header path and commit) */
    uint32_t method_count;
    const vgt_method_info *methods;   /* ascending offset */
    const uint16_t *index;        /* VGT_CLASS_METHOD_SPACE/4 entries: method number + 1, or 0 */
} vgt_class;

/* Classes known to this build. */
uint32_t vgt_class_count(void);
const vgt_class *vgt_class_at(uint32_t i);
const vgt_class *vgt_class_find(uint32_t id);              /* NULL when unknown */
const vgt_class *vgt_class_find_name(const char *name);    /* "HOPPER_A" or "CB97"/"0xcb97", any case */
const char *vgt_class_kind_name(vgt_class_kind kind);      /* "host", "3d", ...; never NULL */
/* The class's name, or "CLASS_%04X" formatted into buf when unknown. */
const char *vgt_class_name(uint32_t id, char *buf, size_t size);

/* The method at byte address mthd, with its array element in *index (0 for scalars; index may be NULL).
 * NULL when the class does not define that address. */
static inline const vgt_method_info *vgt_class_method(const vgt_class *c, uint32_t mthd, uint32_t *index)
{
    if (!c || mthd >= VGT_CLASS_METHOD_SPACE) return 0;
    uint16_t k = c->index[mthd >> 2];
    if (!k) return 0;
    const vgt_method_info *m = &c->methods[k - 1];
    if (index) *index = m->stride ? (mthd - m->offset) / m->stride : 0;
    return m;
}

/* By name: "SET_COLOR_TARGET_FORMAT" (element 0) or "SET_COLOR_TARGET_FORMAT(3)". Returns the byte
 * address in *mthd. NULL when the class has no such method or the element is out of range. */
const vgt_method_info *vgt_class_method_by_name(const vgt_class *c, const char *name, uint32_t *mthd);

/* Extract a field's bits from a method's data. */
static inline uint32_t vgt_class_field_get(const vgt_class_field *f, uint32_t data)
{
    uint32_t width = (uint32_t)f->hi - f->lo + 1u;
    return width >= 32 ? data : (data >> f->lo) & ((1u << width) - 1u);
}
const char *vgt_class_enum_name(const vgt_class_field *f, uint32_t value);   /* NULL when none */

/* Formatting. Each writes a NUL-terminated string (truncated to size) and returns the length the full
 * text has (snprintf style), so callers can detect truncation.
 *   name:   "SET_COLOR_TARGET_FORMAT(3)", "SEM_EXECUTE", or "0x1234" for an unknown method
 *   fields: "V=RF32_GF32_BF32_AF32" / "OPERATION=RELEASE, PAYLOAD_SIZE=64BIT" / "0x00000012" (no fields)
 *   full:   "<name> = <fields>"
 *   json:   {"method":"SET_COLOR_TARGET_FORMAT","index":3,"fields":{"V":"RF32_GF32_BF32_AF32"}}
 *           (enum fields as strings, numbers as numbers, floats as numbers; unknown methods: "method":null) */
size_t vgt_method_name(uint32_t cls, uint32_t mthd, char *buf, size_t size);
size_t vgt_method_format_fields(uint32_t cls, uint32_t mthd, uint32_t data, char *buf, size_t size);
size_t vgt_method_format(uint32_t cls, uint32_t mthd, uint32_t data, char *buf, size_t size);
size_t vgt_method_format_json(uint32_t cls, uint32_t mthd, uint32_t data, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
