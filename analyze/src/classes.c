/* classes.c: lookups over the generated class tables (classes_table.c): classes by id or name, methods
 * by name, enum names. Method-by-address lookup is the inline vgt_class_method in vgt/classes.h. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "classes_table.h"

uint32_t vgt_class_count(void)
{
    return vgt_classes_table_count_;
}

const vgt_class *vgt_class_at(uint32_t i)
{
    return i < vgt_classes_table_count_ ? &vgt_classes_table_[i] : NULL;
}

const vgt_class *vgt_class_find(uint32_t id)
{
    uint32_t lo = 0, hi = vgt_classes_table_count_;
    while (lo < hi) {   /* the table is sorted by id */
        uint32_t mid = lo + (hi - lo) / 2;
        if (vgt_classes_table_[mid].id == id) return &vgt_classes_table_[mid];
        if (vgt_classes_table_[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

const vgt_class *vgt_class_find_name(const char *name)
{
    if (!name || !*name) return NULL;
    for (uint32_t i = 0; i < vgt_classes_table_count_; i++)
        if (!strcasecmp(vgt_classes_table_[i].name, name)) return &vgt_classes_table_[i];
    char *end;
    unsigned long id = strtoul(name, &end, 16);   /* "CB97", "0xcb97" */
    return *end == 0 && id <= 0xffff ? vgt_class_find((uint32_t)id) : NULL;
}

const char *vgt_class_kind_name(vgt_class_kind kind) { return vgt_nv_family_name((vgt_nv_family)kind); }

const char *vgt_class_name(uint32_t id, char *buf, size_t size)
{
    const vgt_class *c = vgt_class_find(id);
    if (c) return c->name;
    if (buf && size) snprintf(buf, size, "CLASS_%04X", id);
    return buf ? buf : "CLASS_UNKNOWN";
}

const vgt_method_info *vgt_class_method_by_name(const vgt_class *c, const char *name, uint32_t *mthd)
{
    if (!c || !name) return NULL;
    size_t len = strcspn(name, "(");
    unsigned long index = 0;
    if (name[len] == '(') {
        char *end;
        index = strtoul(name + len + 1, &end, 0);
        if (end == name + len + 1 || strcmp(end, ")") != 0) return NULL;
    }
    for (uint32_t i = 0; i < c->method_count; i++) {
        const vgt_method_info *m = &c->methods[i];
        if (strncasecmp(m->name, name, len) != 0 || m->name[len] != 0) continue;
        if (index >= m->count) return NULL;
        if (mthd) *mthd = m->offset + (uint32_t)index * m->stride;
        return m;
    }
    return NULL;
}

const char *vgt_class_enum_name(const vgt_class_field *f, uint32_t value)
{
    for (uint16_t i = 0; i < f->enum_count; i++)
        if (f->enums[i].value == value) return f->enums[i].name;
    return NULL;
}
