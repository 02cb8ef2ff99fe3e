/* nv_facts.h: the NVIDIA facts every part shares, below every part: class families and traits, and the
 * methods and QMD fields that carry GPU addresses.
 *
 * The facts are data in trace-format/facts/ (classes/: one method table per class, a .cls file; families.txt:
 * classes known by family only and the MME ranges; addresses.txt: the address operands), turned into C
 * at build time by trace-format/facts/gen_classes.py. The same data gives:
 *   - vgt/nv/clXXXX.h (all of them: vgt/nv_classes.h): each class's method offsets as constants,
 *     NVCB97_SET_ZT_A, NVCB97_SET_COLOR_TARGET_A(j) for arrays (with __SIZE), and its fields'
 *     _SHIFT/_MASK and enum values: VGT_NV_GET(data, NVC86F_SEM_EXECUTE_OPERATION) ==
 *     NVC86F_SEM_EXECUTE_OPERATION_RELEASE;
 *   - the tables below (a class's family, QMD version and MME encoding; the address operands);
 *   - analyze's decoding tables (vgt/classes.h: names, fields and enums for printing).
 * Adding a class, or an address-bearing method, is one data change. The GPFIFO entry and method header
 * codec is vgt/nv_pushbuf.h; the RM/UVM ABI is vgt/nv_abi.h.
 *
 *     if (vgt_nv_class_family(0xCB97) == VGT_NV_FAM_3D) ...
 *     const vgt_nv_addr_method *op; uint32_t el;
 *     int half = vgt_nv_addr_method_of(0xCB97, NVCB97_SET_COLOR_TARGET_B(2), &op, &el);   // 1 (low), el 2
 */
#ifndef VGT_NV_FACTS_H
#define VGT_NV_FACTS_H

#include <stddef.h>
#include <stdint.h>

#include "vgt/nv_facts_gen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Field access with the generated _SHIFT/_MASK pairs (F is a field's prefix, E an enum suffix). */
#define VGT_NV_GET(data, F) (((uint32_t)(data) & F##_MASK) >> F##_SHIFT)
#define VGT_NV_SET(F, v) (((uint32_t)(v) << F##_SHIFT) & F##_MASK)
#define VGT_NV_DEF(F, E) VGT_NV_SET(F, F##_##E)

/* Engine families: the order of vgt_class_kind (vgt/classes.h), which uses these values. */
typedef enum vgt_nv_family {
    VGT_NV_FAM_NONE = 0,
    VGT_NV_FAM_HOST = 1,      /* channel GPFIFO classes (xx6F): host methods below 0x100 */
    VGT_NV_FAM_3D = 2,        /* xx97 */
    VGT_NV_FAM_COMPUTE = 3,   /* xxC0 */
    VGT_NV_FAM_COPY = 4,      /* xxB5 */
    VGT_NV_FAM_I2M = 5,       /* inline-to-memory (A140) */
    VGT_NV_FAM_2D = 6,        /* 902D */
    VGT_NV_FAM_COUNT_
} vgt_nv_family;

/* QMD layouts (the values of vgt_qmd_version, vgt/qmd.h). */
enum { VGT_NV_QMD_NONE = 0, VGT_NV_QMD_V02_02 = 1, VGT_NV_QMD_V02_03 = 2, VGT_NV_QMD_V03_00 = 3, VGT_NV_QMD_V04_00 = 4 };
/* MME encodings (the values of vgt_mme_format, vgt/mme.h). */
enum { VGT_NV_MME_NONE = 0, VGT_NV_MME_TU104 = 1, VGT_NV_MME_FERMI = 2 };

typedef struct vgt_nv_class {
    uint16_t id;              /* 0xCB97 */
    const char *name;         /* "HOPPER_A" */
    uint8_t family;           /* vgt_nv_family */
    uint8_t qmd;              /* VGT_NV_QMD_*: the QMD layout a compute class launches */
    uint8_t mme;              /* VGT_NV_MME_*: a 3D or compute class's macro engine; NONE for the others */
    uint8_t has_table;        /* its methods are in a .cls table (analyze decodes them by name) */
    const char *source;       /* where the facts come from */
} vgt_nv_class;

/* The MME encoding of the class numbers first..last (families.txt). */
typedef struct vgt_nv_mme_range {
    uint32_t first, last;
    uint8_t mme;
} vgt_nv_mme_range;

/* Every class known to this build, by id; NULL when unknown. */
uint32_t vgt_nv_class_count(void);
const vgt_nv_class *vgt_nv_class_at(uint32_t i);
const vgt_nv_class *vgt_nv_class_info(uint32_t cls);
vgt_nv_family vgt_nv_class_family(uint32_t cls);           /* VGT_NV_FAM_NONE when unknown */
const char *vgt_nv_family_name(vgt_nv_family f);           /* "host", "3d", ...; "unknown" */
unsigned vgt_nv_class_qmd(uint32_t cls);                   /* VGT_NV_QMD_*; NONE when not a known compute class */
unsigned vgt_nv_class_mme(uint32_t cls);                   /* VGT_NV_MME_*; NONE when it has no macro engine */
/* The MME encoding of any class number by the ranges of families.txt (known class or not). */
unsigned vgt_nv_mme_for_class(uint32_t cls);

/* One address operand of the methods: a high and a low method (one method when hi_mask is 0), the address
 * being ((hi & hi_mask) << 32 | lo) << shift. Arrays repeat at +j * stride, count elements. */
typedef struct vgt_nv_addr_method {
    uint8_t family;           /* vgt_nv_family: every class of it that defines the methods */
    uint16_t hi, lo;          /* method offsets (hi unused when hi_mask is 0) */
    uint32_t hi_mask;
    uint8_t shift;
    uint8_t count;
    uint16_t stride;
    uint8_t role;             /* vgt_nv_addr_role */
    const char *name;         /* "SET_COLOR_TARGET_A/B" */
} vgt_nv_addr_method;

/* One QMD address: fields named as in analyze's QMD field tables (a version without them has none). */
typedef struct vgt_nv_addr_qmd {
    const char *lower, *upper;   /* upper NULL: one field */
    uint8_t shift;
    uint8_t role;
    const char *what;            /* "program address" */
} vgt_nv_addr_qmd;

const vgt_nv_addr_method *vgt_nv_addr_method_at(uint32_t i);   /* i < VGT_NV_ADDR_METHOD_COUNT */
const vgt_nv_addr_qmd *vgt_nv_addr_qmd_at(uint32_t i);         /* i < VGT_NV_ADDR_QMD_COUNT */
const char *vgt_nv_addr_role_name(unsigned role);              /* "SEMAPHORE", ...; "NONE" */
/* The operand a method of class cls writes: 0 its high half, 1 its low half (or its one method), -1 none;
 * *element: the array element. Operands are found by the class's family. */
int vgt_nv_addr_method_of(uint32_t cls, uint32_t mthd, const vgt_nv_addr_method **op, uint32_t *element);
/* The address two halves carry; the halves that carry va instead (old_hi keeps the bits above the mask). */
uint64_t vgt_nv_addr_method_value(const vgt_nv_addr_method *op, uint32_t hi, uint32_t lo);
void vgt_nv_addr_method_encode(const vgt_nv_addr_method *op, uint64_t va, uint32_t old_hi, uint32_t *hi, uint32_t *lo);

/* ---- the RM/UVM ABI table's driver (facts/rm_abi.txt "driver": series and checked versions) ---- */
typedef enum vgt_nv_driver_fit {
    VGT_NV_DRIVER_CHECKED = 0,        /* a version the table was checked against */
    VGT_NV_DRIVER_UNCHECKED = 1,      /* the table's series, another version: its layouts are used, with a warning */
    VGT_NV_DRIVER_OTHER_SERIES = 2,   /* another series: layouts may differ (a warning; hardware replay refuses) */
    VGT_NV_DRIVER_UNKNOWN = 3,        /* no version known */
} vgt_nv_driver_fit;
/* The running driver's version ("580.159.04", from /proc/driver/nvidia/version) into out; -1 when none. */
int vgt_nv_running_driver(char *out, size_t size);
/* How a driver version ("580.159.04") fits the table; why (may be NULL) gets a sentence for a warning. */
vgt_nv_driver_fit vgt_nv_abi_driver_check(const char *version, char *why, size_t size);
/* 1 when the table knows an RM escape number, an RM control command, an object class (the table's or the
 * class data's) or a UVM request by name; anything else is recorded raw and listed as unknown. */
int vgt_nv_abi_knows_escape(uint32_t nr);
int vgt_nv_abi_knows_control(uint32_t cmd);
int vgt_nv_abi_knows_class(uint32_t cls);
int vgt_nv_abi_knows_uvm(uint32_t request);

#ifdef __cplusplus
}
#endif
#endif
