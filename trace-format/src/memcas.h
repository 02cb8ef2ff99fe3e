/* memcas.h (private): content-addressed memory contents (format 1.3, MEMORY_CAS; docs/trace-format.md
 * section 5): the memory stream window shared by the writer's encoder and the reader's expander.
 *
 * The memory stream is the data of every MEMORY and (expanded) MEMORY_CAS record in sequence order; a
 * position counts its bytes from the start of the trace. Both sides keep its last VGT_MEMCAS_WINDOW
 * bytes in a ring, so a COPY can name any source inside it. */
#ifndef VGT_MEMCAS_H
#define VGT_MEMCAS_H

#include <stdint.h>

#include "vgt/trace.h"

typedef struct memcas_window {
    uint8_t *ring;             /* VGT_MEMCAS_WINDOW bytes, allocated at the first append */
    uint64_t pos;              /* stream bytes so far */
} memcas_window;

vgt_status memcas_window_append(memcas_window *w, const uint8_t *p, uint64_t n, vgt_error *err);
/* 1 when [src, src+n) lies in the window (and so in the ring). */
int memcas_window_has(const memcas_window *w, uint64_t src, uint64_t n);
void memcas_window_copy(const memcas_window *w, uint64_t src, uint8_t *out, uint64_t n);
void memcas_window_free(memcas_window *w);

/* Reader: the MEMORY payload (24-byte fixed part + data) that the MEMORY_CAS payload p describes, in
 * *out (grown as needed); the window is not changed (the caller appends the data). off: for messages. */
vgt_status memcas_expand(const memcas_window *w, const uint8_t *p, uint32_t len, uint8_t **out, uint32_t *cap,
                         uint32_t *out_len, uint64_t off, vgt_error *err);

/* Writer: the encoder keeps the window plus two maps (block content hash -> position, block address ->
 * position of its last contents). */
typedef struct memcas_encoder memcas_encoder;
vgt_status memcas_encoder_new(memcas_encoder **e, vgt_error *err);
void memcas_encoder_free(memcas_encoder *e);
/* Encode the MEMORY payload p (len bytes): *use_cas 1 with the MEMORY_CAS payload in *out when it is
 * smaller, else 0 (write p as it is). Either way the data joins the window and the maps. */
vgt_status memcas_encode(memcas_encoder *e, const uint8_t *p, uint32_t len, int *use_cas, const uint8_t **out,
                         uint32_t *out_len, vgt_error *err);

#endif
