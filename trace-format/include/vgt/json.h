/* json.h: JSON text helpers for the --json/--jsonl outputs. They write to the stream the caller gives. */
#ifndef VGT_JSON_H
#define VGT_JSON_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

void vgt_json_string(FILE *f, const char *s);                         /* quoted and escaped */
void vgt_json_bytes_hex(FILE *f, const uint8_t *p, uint64_t n);       /* "0a1b..." */

#ifdef __cplusplus
}
#endif
#endif
