/* classes_table.h: the generated class tables (classes_table.c, made by analyze/classes/gen_classes.py
 * from the .cls files in analyze/classes/), sorted by class id. Private to vgt_analyze; use vgt/classes.h. */
#ifndef VGT_CLASSES_TABLE_H
#define VGT_CLASSES_TABLE_H

#include "vgt/classes.h"

extern const vgt_class vgt_classes_table_[];
extern const uint32_t vgt_classes_table_count_;

#endif
