/* classes_table.h: the generated class tables (classes_table.c, made by trace-format/facts/gen_classes.py
 * from the .cls files in trace-format/facts/classes/), sorted by class id. Private to vgt_analyze; use vgt/classes.h. */
#ifndef VGT_CLASSES_TABLE_H
#define VGT_CLASSES_TABLE_H

#include "vgt/classes.h"

extern const vgt_class vgt_classes_table_[];
extern const uint32_t vgt_classes_table_count_;

#endif
