/* records.h (private): the table that describes every record payload of docs/trace-format.md section 5.
 * One description serves the typed encoders, the typed decoders and the generic field walk, so that the
 * three can never disagree about an offset. */
#ifndef VGT_RECORDS_H
#define VGT_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "vgt/trace.h"

/* Field kinds on disk. RSV is a reserved u32 (written 0, not reported). BLOB/TEXT follow the fixed part
 * in table order; their length is the struct's uint32_t named by len_field (an index into the table). */
enum { F_U32 = 1, F_X32, F_S32, F_U64, F_X64, F_RSV, F_BLOB, F_TEXT };

typedef struct rec_field {
    const char *name;
    uint8_t kind;
    uint8_t len_field;        /* BLOB/TEXT: index of the field holding the length */
    uint16_t soff;            /* offset of the member in the vgt_rec_* struct */
} rec_field;

typedef struct rec_layout {
    uint16_t type;
    const char *name;
    uint32_t fixed;           /* bytes of the fixed part, as the spec's tables give them */
    uint32_t nfields;
    const rec_field *fields;
    int gpfifo_tail;          /* GPFIFO_SUBMIT: entries and segments follow the fixed part */
} rec_layout;

const rec_layout *rec_layout_find(uint16_t type);
const rec_layout *rec_layout_at(uint32_t i);    /* NULL past the end; for tests and the type list */

static inline uint32_t rec_field_width(uint8_t kind)
{
    return kind == F_U64 || kind == F_X64 ? 8u : (kind == F_BLOB || kind == F_TEXT ? 0u : 4u);
}

/* Encode the fixed part of p (a vgt_rec_* struct) into out[l->fixed]; decode the reverse. */
void rec_fixed_encode(const rec_layout *l, const void *p, uint8_t *out);
void rec_fixed_decode(const rec_layout *l, const uint8_t *in, void *p);

#endif
