/* dump_record.h: one record as a line of text or of JSON, from the generic field walk (vgt_record_fields).
 * Used by `vgt dump`; any verb that lists records may use it. */
#ifndef VGT_DUMP_RECORD_H
#define VGT_DUMP_RECORD_H

#include <stdio.h>

#include "vgt/trace.h"

/* "SEQ TS TYPE field=value ...": blobs as <length>B:<hex of the first 16 bytes>. Both printers return
 * 0, or 1 when the payload did not decode (the line then says why). */
int vgt_dump_record_text(FILE *f, const vgt_record *r);
/* {"seq":..,"ts":..,"type":"..","type_id":..,"flags":..,"length":..,"chunk_offset":..,"fields":{..}}:
 * blobs in full hex, text as strings, entries as numbers, segments as objects. A payload that does not
 * decode adds "error": "...". */
int vgt_dump_record_json(FILE *f, const vgt_record *r);
/* A JSON string of n bytes that should be UTF-8 (bytes of an invalid sequence are escaped as \u00XX). */
void vgt_dump_json_text(FILE *f, const uint8_t *p, uint32_t n);

#endif
