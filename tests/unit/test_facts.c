/* test_facts.c: every consumer of the NVIDIA facts (trace-format/facts/) against the facts' tables, so that
 * no hand list can drift from them:
 *   - the class families: analyze's decoding tables (vgt/classes.h), the sim's known classes (through the
 *     backend operation table), the MME encodings and QMD versions of 3D and compute classes;
 *   - the semantic tracker's method table (analyze/src/events_table.c): each row's methods exist in every
 *     class table of its family;
 *   - the address operands: analyze's address pairs (analyze/src/addr_operands.c, vgt/addr_operands.h:
 *     what the replay's relocation and plan rewrite and follow) find every element of every operand in
 *     every class of its family, each in a state slot of its own; the QMD address fields name fields of
 *     analyze's QMD tables, every address field of those tables is one of them, and analyze's QMD
 *     rewrite (analyze/src/addr_qmd.c) reads and rewrites each of them;
 *   - the generated method constants, field shifts/masks and enum values against the decoding tables;
 *   - the GPFIFO entry and method header codec against analyze's decoder;
 *   - the RM/UVM ABI table's request sizes.
 * The private tables of analyze are read through its own headers. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "vgt/addr_operands.h"
#include "vgt/backend.h"
#include "vgt/classes.h"
#include "vgt/mme.h"
#include "vgt/nv/cla140.h"
#include "vgt/nv/clc86f.h"
#include "vgt/nv/clc8b5.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv/clcbc0.h"
#include "vgt/nv_abi.h"
#include "vgt/nv_facts.h"
#include "vgt/nv_pushbuf.h"
#include "vgt/pushbuf.h"
#include "vgt/qmd.h"

#include "../../analyze/src/qmd_roles.h"
#include "../../analyze/src/sem_internal.h"

/* Every class of the facts is analyze's when it has a table, with the same name and family; every class
 * of analyze's tables is in the facts. */
static void test_analyze_classes(void)
{
    uint32_t with_table = 0;
    for (uint32_t i = 0; i < vgt_nv_class_count(); i++) {
        const vgt_nv_class *f = vgt_nv_class_at(i);
        const vgt_class *c = vgt_class_find(f->id);
        CHECK(f->family != VGT_NV_FAM_NONE, "class %04X has no family", f->id);
        CHECK(vgt_nv_class_info(f->id) == f && vgt_nv_class_family(f->id) == f->family, "class %04X lookup", f->id);
        if (!f->has_table) {
            CHECK(c == NULL, "class %04X has no table in the facts but one in analyze", f->id);
            continue;
        }
        with_table++;
        CHECK(c != NULL, "class %04X has a table in the facts but none in analyze", f->id);
        if (!c) continue;
        CHECK(!strcmp(c->name, f->name), "class %04X: analyze says %s, the facts %s", f->id, c->name, f->name);
        CHECK_EQ_U64(c->kind, f->family, "class %04X: analyze's kind is the facts' family", f->id);
    }
    CHECK_EQ_U64(vgt_class_count(), with_table, "analyze has exactly the classes with a table");
    for (uint32_t i = 0; i < vgt_class_count(); i++)
        CHECK(vgt_nv_class_info(vgt_class_at(i)->id) != NULL, "analyze class %04X not in the facts", vgt_class_at(i)->id);
    CHECK(vgt_nv_class_family(0xC76F) == VGT_NV_FAM_HOST, "AMPERE_CHANNEL_GPFIFO_B is a host class");
    CHECK(vgt_nv_class_family(0xC997) == VGT_NV_FAM_NONE, "an unknown class has no family");
    /* the lookup keeps its last answer: asked again, or after an unknown class or class 0, it answers each anew */
    const uint32_t asks[] = {0xCBC0, 0xCBC0, 0xC997, 0xC997, 0xCBC0, 0, 0, 0xCB97, 0xC86F, 0xCB97, 0xC997, 0xCBC0};
    for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
        const vgt_nv_class *f = vgt_nv_class_info(asks[i]);
        int known = asks[i] == 0xCBC0 || asks[i] == 0xCB97 || asks[i] == 0xC86F;
        CHECK(known ? f && f->id == asks[i] : !f, "lookup %zu of class %04X: %04X", i, asks[i], f ? f->id : 0);
    }
    CHECK(!strcmp(vgt_class_kind_name(VGT_CLASS_I2M), "i2m") && !strcmp(vgt_nv_family_name(VGT_NV_FAM_3D), "3d"),
          "family names");
}

/* MME encodings and QMD versions: a 3D or compute class has the MME of its class-number range, no other
 * class has one; a compute class with a table launches a known QMD version. */
static void test_traits(void)
{
    for (uint32_t i = 0; i < vgt_nv_class_count(); i++) {
        const vgt_nv_class *f = vgt_nv_class_at(i);
        int has_mme = f->family == VGT_NV_FAM_3D || f->family == VGT_NV_FAM_COMPUTE;
        CHECK_EQ_U64(f->mme, has_mme ? (unsigned)vgt_mme_format_for_class(f->id) : (unsigned)VGT_MME_NONE,
                     "class %04X MME trait", f->id);
        if (f->family == VGT_NV_FAM_COMPUTE)
            CHECK(f->qmd != VGT_NV_QMD_NONE && vgt_qmd_version_size((vgt_qmd_version)f->qmd) != 0,
                  "compute class %04X has a QMD version", f->id);
        else
            CHECK(f->qmd == VGT_NV_QMD_NONE, "class %04X is not compute but has a QMD version", f->id);
    }
    CHECK_EQ_U64(vgt_nv_class_qmd(0xCBC0), VGT_QMD_V04_00, "HOPPER_COMPUTE_A launches V04_00");
    CHECK_EQ_U64(vgt_mme_format_for_class(0xC597), VGT_MME_TU104, "TURING_A: TU104");
    CHECK_EQ_U64(vgt_mme_format_for_class(0xC397), VGT_MME_FERMI, "VOLTA_A: Fermi");
    CHECK_EQ_U64(vgt_mme_format_for_class(0x8097), VGT_MME_NONE, "below FERMI_A: none");
    /* the last answer is kept: asking again, and alternating, gives each class its own */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_U64(vgt_mme_format_for_class(0xC597), VGT_MME_TU104, "TURING_A again (%d)", i);
        CHECK_EQ_U64(vgt_mme_format_for_class(0xC597), VGT_MME_TU104, "TURING_A twice (%d)", i);
        CHECK_EQ_U64(vgt_mme_format_for_class(0x8097), VGT_MME_NONE, "below FERMI_A again (%d)", i);
        CHECK_EQ_U64(vgt_mme_format_for_class(0xC397), VGT_MME_FERMI, "VOLTA_A again (%d)", i);
    }
}

/* The sim knows exactly the facts' classes: creating an object of each succeeds; of another class, it is
 * VGT_E_UNSUPPORTED. */
static void test_sim_classes(void)
{
    const vgt_backend_ops *ops = &vgt_backend_sim;
    vgt_backend *b;
    vgt_error err;
    vgt_backend_config cfg = {.max_memory_bytes = 16u << 20};
    if (ops->open(&b, &cfg, &err) != VGT_OK) {
        CHECK(0, "sim open: %s", err.msg);
        return;
    }
    uint32_t vas, ch;
    ops->vaspace_create(b, &vas, &err);
    vgt_backend_channel_desc d = {.vas = vas, .cls = NVC86F_CLASS, .entries = 64, .handle = 0xC0};
    CHECK(ops->channel_create(b, &d, &ch, &err) == VGT_OK, "channel: %s", err.msg);
    for (uint32_t i = 0; i < vgt_nv_class_count() && i < 60; i++) {
        const vgt_nv_class *f = vgt_nv_class_at(i);
        CHECK_STATUS(ops->object_create(b, ch, f->id, 0x100 + i, &err), VGT_OK, &err, "the sim knows class %04X", f->id);
    }
    CHECK_STATUS(ops->object_create(b, ch, 0xC997, 0x200, &err), VGT_E_UNSUPPORTED, &err, "an unknown class");
    ops->close(b);
}

/* Each row of the semantic tracker's table names methods every class table of its family defines (from
 * min_class on). */
static void test_events_table(void)
{
    for (uint32_t k = 0; k < vgt_sem_method_table_count; k++) {
        const sem_method_spec *s = &vgt_sem_method_table[k];
        uint32_t seen = 0;
        for (uint32_t i = 0; i < vgt_class_count(); i++) {
            const vgt_class *c = vgt_class_at(i);
            if ((unsigned)c->kind != s->family || c->id < s->min_class) continue;
            seen++;
            for (uint32_t j = 0; j < s->count; j++) {
                uint32_t mthd = s->mthd + j * s->stride;
                CHECK(vgt_class_method(c, mthd, NULL) != NULL, "events table row %u: class %04X has no method 0x%04x", k,
                      c->id, mthd);
            }
        }
        CHECK(seen > 0, "events table row %u (family %u, method 0x%04x): no class table of its family", k, s->family,
              s->mthd);
    }
}

/* analyze's address pairs (the replay's relocation and plan use them) find every element of every address
 * operand, in every class of the operand's family (known or not to analyze), with each element in its own
 * state slot; the method the operand names is the class table's. */
static void test_address_methods(void)
{
    uint8_t used[VGT_ADDR_PAIR_SLOTS] = {0};
    CHECK(VGT_NV_ADDR_METHOD_SLOTS <= VGT_ADDR_PAIR_SLOTS, "slots");
    for (uint32_t n = 0; n < VGT_NV_ADDR_METHOD_COUNT; n++) {
        const vgt_nv_addr_method *op = vgt_nv_addr_method_at(n);
        CHECK(op->role != VGT_NV_ADDR_NONE && strcmp(vgt_nv_addr_role_name(op->role), "NONE"), "%s has a role", op->name);
        for (uint32_t i = 0; i < vgt_nv_class_count(); i++) {
            const vgt_nv_class *f = vgt_nv_class_at(i);
            if (f->family != op->family) continue;
            for (uint32_t j = 0; j < op->count; j++) {
                const vgt_addr_pair *p = NULL;
                uint32_t slot = 0;
                uint32_t lo = op->lo + j * op->stride, hi = op->hi + j * op->stride;
                int half = vgt_addr_pair_of(f->id, lo, &p, &slot);
                CHECK(half == 1 && p == op, "class %04X: %s(%u) low half not found", f->id, op->name, j);
                if (half == 1 && slot < VGT_ADDR_PAIR_SLOTS && i == 0) used[slot]++;
                if (op->hi_mask) {
                    uint32_t slot_hi = 0;
                    CHECK(vgt_addr_pair_of(f->id, hi, &p, &slot_hi) == 0 && slot_hi == slot, "class %04X: %s(%u) high half",
                          f->id, op->name, j);
                }
            }
        }
    }
    /* slots: count over the operands once (the loop above counts only the first class of the table) */
    memset(used, 0, sizeof used);
    for (uint32_t n = 0; n < VGT_NV_ADDR_METHOD_COUNT; n++) {
        const vgt_nv_addr_method *op = vgt_nv_addr_method_at(n);
        uint32_t cls = 0;
        for (uint32_t i = 0; i < vgt_nv_class_count() && !cls; i++)
            if (vgt_nv_class_at(i)->family == op->family) cls = vgt_nv_class_at(i)->id;
        for (uint32_t j = 0; j < op->count; j++) {
            const vgt_addr_pair *p;
            uint32_t slot = VGT_ADDR_PAIR_SLOTS;
            if (vgt_addr_pair_of(cls, op->lo + j * op->stride, &p, &slot) == 1 && slot < VGT_ADDR_PAIR_SLOTS) used[slot]++;
        }
    }
    for (uint32_t s = 0; s < VGT_NV_ADDR_METHOD_SLOTS; s++) CHECK_EQ_U64(used[s], 1, "state slot %u used once", s);
    /* by name, in the newest tables */
    const vgt_nv_addr_method *op;
    uint32_t el;
    CHECK(vgt_nv_addr_method_of(0xCB97, NVCB97_SET_COLOR_TARGET_B(3), &op, &el) == 1 && el == 3 &&
              op->role == VGT_NV_ADDR_RENDER_TARGET && op->hi == NVCB97_SET_COLOR_TARGET_A(0),
          "render target 3 of HOPPER_A");
    CHECK(vgt_nv_addr_method_of(0xC86F, NVC86F_SEM_ADDR_HI, &op, &el) == 0 && op->lo == NVC86F_SEM_ADDR_LO &&
              op->hi_mask == NVC86F_SEM_ADDR_HI_OFFSET_MASK,
          "host semaphore address");
    CHECK(vgt_nv_addr_method_of(0xCBC0, NVCBC0_SEND_PCAS_A, &op, &el) == 1 && op->shift == 8 && op->role == VGT_NV_ADDR_QMD,
          "SEND_PCAS_A carries a QMD address >> 8");
    CHECK_EQ_U64(vgt_nv_addr_method_value(op, 0, 0x12345), 0x1234500ull, "one-method address");
    CHECK(vgt_nv_addr_method_of(0xCB97, NVCB97_SET_ZT_A + 8, &op, &el) < 0, "SET_ZT_C carries no address");
}

/* The address-method lookup (an index built once) answers as a scan of the table in its order does, for
 * every method of every known class and of a class that is not one, and the class lookup (which remembers
 * its last answer) as a search does, whatever was asked before. */
static void test_address_lookup_as_scan(void)
{
    uint32_t classes[VGT_NV_CLASS_COUNT + 1], ncls = 0, found = 0;
    for (uint32_t i = 0; i < vgt_nv_class_count(); i++) classes[ncls++] = vgt_nv_class_at(i)->id;
    classes[ncls++] = 0xC997;   /* unknown */
    for (uint32_t c = 0; c < ncls; c++) {
        uint32_t cls = classes[c];
        vgt_nv_family fam = VGT_NV_FAM_NONE;
        for (uint32_t i = 0; i < vgt_nv_class_count(); i++)
            if (vgt_nv_class_at(i)->id == cls) fam = (vgt_nv_family)vgt_nv_class_at(i)->family;
        CHECK(vgt_nv_class_family(cls) == fam, "class %04X: family", cls);
        for (uint32_t m = 0; m < 0x10000; m += 4) {
            const vgt_nv_addr_method *want = NULL, *got = NULL;
            uint32_t wel = 0, gel = 0;
            int whalf = -1;
            for (uint32_t i = 0; fam != VGT_NV_FAM_NONE && i < VGT_NV_ADDR_METHOD_COUNT && whalf < 0; i++) {
                const vgt_nv_addr_method *p = vgt_nv_addr_method_at(i);
                if (p->family != fam) continue;
                for (uint32_t j = 0; j < p->count && whalf < 0; j++) {
                    uint32_t off = j * p->stride;
                    whalf = p->hi_mask && m == p->hi + off ? 0 : m == p->lo + off ? 1 : -1;
                    if (whalf >= 0) want = p, wel = j;
                }
            }
            int ghalf = vgt_nv_addr_method_of(cls, m, &got, &gel);
            if (ghalf != whalf || (whalf >= 0 && (got != want || gel != wel)))
                CHECK(0, "class %04X method 0x%04X: %d (element %u) where the scan says %d (element %u)", cls, m, ghalf, gel,
                      whalf, wel);
            found += whalf >= 0;
        }
    }
    CHECK(found > 2 * VGT_NV_ADDR_METHOD_COUNT, "the scan found address methods (%u)", found);
}

static int qmd_address_role(unsigned role)
{
    return role == QR_PROG_LO || role == QR_CB_ADDR_LO || role == QR_CB_ADDR_LO_SHIFTED6 || role == QR_REL_ADDR_LO ||
           role == QR_DEP_PTR_SHIFTED8 || role == QR_PREFETCH_LO_SHIFTED8;
}

/* The QMD address fields are fields of analyze's QMD tables; every address field of those tables is one. */
static void test_address_qmd(void)
{
    static const vgt_qmd_version versions[] = {VGT_QMD_V02_02, VGT_QMD_V02_03, VGT_QMD_V03_00, VGT_QMD_V04_00};
    for (uint32_t a = 0; a < VGT_NV_ADDR_QMD_COUNT; a++) {
        const vgt_nv_addr_qmd *q = vgt_nv_addr_qmd_at(a);
        int found = 0;
        for (uint32_t v = 0; v < 4; v++) {
            uint32_t n;
            const vgt_qmd_field *t = vgt_qmd_fields(versions[v], &n);
            int lo = 0, hi = q->upper == NULL;
            for (uint32_t i = 0; i < n; i++) {
                lo |= !strcmp(t[i].name, q->lower);
                hi |= q->upper && !strcmp(t[i].name, q->upper);
            }
            found |= lo && hi;
        }
        CHECK(found, "QMD address %s/%s is in no QMD version", q->lower, q->upper ? q->upper : "-");
    }
    for (uint32_t v = 0; v < 4; v++) {
        uint32_t n;
        const vgt_qmd_field *t = vgt_qmd_fields(versions[v], &n);
        for (uint32_t i = 0; i < n; i++) {
            if (!qmd_address_role(t[i].role)) continue;
            int listed = 0;
            for (uint32_t a = 0; a < VGT_NV_ADDR_QMD_COUNT; a++) listed |= !strcmp(vgt_nv_addr_qmd_at(a)->lower, t[i].name);
            CHECK(listed, "QMD %s field %s carries an address the facts do not list", vgt_qmd_version_name(versions[v]),
                  t[i].name);
        }
    }
}

/* The translation of the rewrite test: one address moves (from, to). */
static uint64_t qmd_move(const void *ctx, uint64_t va)
{
    const uint64_t *m = ctx;
    return va == m[0] ? m[1] : va;
}

static const vgt_qmd_field *qmd_field(const vgt_qmd_field *t, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n && name; i++)
        if (!strcmp(t[i].name, name)) return &t[i];
    return NULL;
}

/* analyze's QMD rewrite (vgt_qmd_relocate, analyze/src/addr_qmd.c) reads and rewrites every QMD address
 * field of the facts in every version that has it: an address stored in the field moves, named by the
 * facts' "what". */
static void test_address_qmd_rewrite(void)
{
    static const struct { vgt_qmd_version v; unsigned major, minor; } versions[] = {
        {VGT_QMD_V02_02, 2, 2}, {VGT_QMD_V02_03, 2, 3}, {VGT_QMD_V03_00, 3, 0}, {VGT_QMD_V04_00, 4, 0}};
    uint32_t rewritten = 0;
    for (uint32_t v = 0; v < 4; v++) {
        uint32_t n;
        const vgt_qmd_field *t = vgt_qmd_fields(versions[v].v, &n);
        for (uint32_t a = 0; a < VGT_NV_ADDR_QMD_COUNT; a++) {
            const vgt_nv_addr_qmd *q = vgt_nv_addr_qmd_at(a);
            const vgt_qmd_field *lo = qmd_field(t, n, q->lower), *hi = qmd_field(t, n, q->upper);
            if (!lo || (q->upper && !hi)) continue;
            uint8_t b[384] = {0};
            vgt_qmd_set_bits(b, sizeof b, 583, 580, versions[v].major);
            vgt_qmd_set_bits(b, sizeof b, 579, 576, versions[v].minor);
            /* values that fit the narrowest address field (a 32-bit pointer stored >> 8) */
            uint64_t raw = (uint64_t)(a + 1) << 16, va = raw << q->shift, move[2] = {va, (raw + 0x1000000) << q->shift};
            unsigned lo_bits = lo->hi - lo->lo + 1;
            vgt_qmd_set_bits(b, sizeof b, lo->hi, lo->lo, raw);
            if (hi) vgt_qmd_set_bits(b, sizeof b, hi->hi, hi->lo, raw >> lo_bits);
            vgt_qmd_fix fix[VGT_QMD_MAX_FIXES];
            uint32_t k = vgt_qmd_relocate(qmd_move, move, b, vgt_qmd_version_size(versions[v].v), fix, VGT_QMD_MAX_FIXES);
            CHECK(k == 1 && fix[0].from == va && fix[0].to == move[1] && !strcmp(fix[0].what, q->what) &&
                      fix[0].element == lo->first,
                  "QMD %s: %s not rewritten as the facts say", vgt_qmd_version_name(versions[v].v), q->lower);
            uint64_t back = vgt_qmd_bits(b, sizeof b, lo->hi, lo->lo);
            if (hi) back |= vgt_qmd_bits(b, sizeof b, hi->hi, hi->lo) << lo_bits;
            CHECK_EQ_U64(back << q->shift, move[1], "QMD %s: %s holds the moved address",
                         vgt_qmd_version_name(versions[v].v), q->lower);
            rewritten++;
        }
    }
    CHECK(rewritten >= VGT_NV_ADDR_QMD_COUNT, "every QMD address field rewritten in some version (%u)", rewritten);
}

/* The generated constants are the decoding tables' offsets, bit ranges and values. */
static void test_constants(void)
{
    static const struct { uint32_t cls; const char *name; uint32_t mthd; } m[] = {
        {0xC86F, "SEM_EXECUTE", NVC86F_SEM_EXECUTE},
        {0xC86F, "SET_OBJECT", NVC86F_SET_OBJECT},
        {0xCB97, "SET_COLOR_TARGET_A(3)", NVCB97_SET_COLOR_TARGET_A(3)},
        {0xCB97, "SET_PIPELINE_PROGRAM_ADDRESS_B(5)", NVCB97_SET_PIPELINE_PROGRAM_ADDRESS_B(5)},
        {0xCBC0, "LOAD_INLINE_QMD_DATA(95)", NVCBC0_LOAD_INLINE_QMD_DATA(95)},
        {0xC8B5, "SET_REMAP_CONST_B", NVC8B5_SET_REMAP_CONST_B},
        {0xA140, "LOAD_INLINE_DATA", NVA140_LOAD_INLINE_DATA},
    };
    for (uint32_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        uint32_t at = 0;
        CHECK(vgt_class_method_by_name(vgt_class_find(m[i].cls), m[i].name, &at) && at == m[i].mthd,
              "%04X %s: table 0x%04x, constant 0x%04x", m[i].cls, m[i].name, at, m[i].mthd);
    }
    CHECK(NVCB97_SET_COLOR_TARGET_A__SIZE == 8 && NVCBC0_LOAD_INLINE_QMD_DATA__SIZE == 96, "array sizes");
    const vgt_method_info *se = vgt_class_method(vgt_class_find(0xC86F), NVC86F_SEM_EXECUTE, NULL);
    for (uint32_t f = 0; se && f < se->field_count; f++) {
        if (strcmp(se->fields[f].name, "PAYLOAD_SIZE")) continue;
        CHECK(se->fields[f].lo == NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_SHIFT &&
                  ((1u << (se->fields[f].hi + 1 - se->fields[f].lo)) - 1) << se->fields[f].lo == NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_MASK,
              "PAYLOAD_SIZE bit range");
        CHECK(!strcmp(vgt_class_enum_name(&se->fields[f], NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT), "64BIT"), "64BIT");
    }
    uint32_t data = VGT_NV_DEF(NVC86F_SEM_EXECUTE_OPERATION, RELEASE) | VGT_NV_DEF(NVC86F_SEM_EXECUTE_PAYLOAD_SIZE, 64BIT);
    CHECK_EQ_U64(data, 0x01000001u, "SEM_EXECUTE RELEASE, 64-bit");
    CHECK_EQ_U64(VGT_NV_GET(data, NVC86F_SEM_EXECUTE_PAYLOAD_SIZE), 1, "field get");
    char buf[256];
    vgt_method_format(0xC86F, NVC86F_SEM_EXECUTE, data, buf, sizeof buf);
    CHECK(strstr(buf, "OPERATION=RELEASE") && strstr(buf, "PAYLOAD_SIZE=64BIT"), "decoded: %s", buf);
}

/* The codec against analyze's decoder: entries (main, subroutine, sync, control, extended base) and
 * headers of every kind. */
static void test_codec(void)
{
    vgt_gp_entry e;
    uint64_t raw = vgt_nv_gp_encode(0xff12345678ull, 0x1fffff, VGT_NV_GP_SUBROUTINE | VGT_NV_GP_SYNC);
    vgt_gp_entry_decode(raw, &e);
    CHECK(!e.is_control && e.va == 0xff12345678ull && e.length == 0x1fffff && e.level == 1 && e.sync == 1,
          "entry: va 0x%llx length %u level %u sync %u", (unsigned long long)e.va, e.length, e.level, e.sync);
    CHECK_EQ_U64(raw >> 32, 0xfffffeffu, "word 1: GET_HI, LEVEL, LENGTH, SYNC");
    vgt_gp_entry_decode(vgt_nv_gp_encode(0x1000, 3, 0), &e);
    CHECK(e.va == 0x1000 && e.length == 3 && !e.level && !e.sync, "main entry");
    uint64_t moved = vgt_nv_gp_with_va(raw | 1u, 0x2233445500ull);
    vgt_gp_entry_decode(moved, &e);
    CHECK(e.va == 0x2233445500ull && e.length == 0x1fffff && e.level && e.sync && e.fetch, "with_va keeps the rest");
    uint64_t ctl = vgt_nv_gp_control(VGT_NV_GP_OPCODE_SET_PB_SEGMENT_EXTENDED_BASE, 0x1abcdu << 8);
    vgt_gp_entry_decode(ctl, &e);
    CHECK(e.is_control && e.opcode == 4 && e.operand == 0x1abcd && vgt_nv_gp_extended_base(ctl) == 0x1abcdull << 40,
          "extended base");
    uint8_t bytes[8];
    for (int i = 0; i < 8; i++) bytes[i] = (uint8_t)(raw >> (8 * i));
    CHECK_EQ_U64(vgt_nv_gp_load(bytes), raw, "an entry as it lies in the ring");

    static const uint32_t secs[] = {VGT_NV_SEC_INC, VGT_NV_SEC_NON_INC, VGT_NV_SEC_ONE_INC, VGT_NV_SEC_IMMD};
    for (uint32_t i = 0; i < 4; i++) {
        uint32_t h = vgt_nv_mh_encode(secs[i], 0x1234, 5, NVCB97_SET_ZT_A);
        CHECK(vgt_nv_mh_sec_op(h) == secs[i] && vgt_nv_mh_count(h) == 0x1234 && vgt_nv_mh_subch(h) == 5 &&
                  vgt_nv_mh_method(h) == NVCB97_SET_ZT_A,
              "header %u: 0x%08x", secs[i], h);
    }
    CHECK(vgt_nv_is_host_method(NVC86F_SEM_EXECUTE) && !vgt_nv_is_host_method(NVCB97_SET_ZT_A), "host methods");
    CHECK_EQ_U64(VGT_HDR_NONINC, VGT_NV_SEC_NON_INC, "pushbuf.h header kinds are SEC_OP values");
}

static void test_abi(void)
{
    CHECK_EQ_U64(vgt_nv_uvm_params_size(UVM_REQ_MAP_EXTERNAL_ALLOCATION), 0x2430, "MAP_EXTERNAL_ALLOCATION");
    CHECK_EQ_U64(vgt_nv_uvm_params_size(UVM_REQ_FREE), 0x18, "FREE");
    CHECK_EQ_U64(vgt_nv_uvm_params_size(UVM_REQ_INITIALIZE), 0x10, "INITIALIZE");
    CHECK_EQ_U64(vgt_nv_uvm_params_size(12345), 0, "unknown request");
    CHECK_EQ_U64(RM_CTRL_CHAN_GET_WORK_TOKEN, 0xc36f0108u, "GET_WORK_SUBMIT_TOKEN");
    CHECK_EQ_U64(RM_REQUEST(RM_ESC_ALLOC, sizeof(rm_alloc_params)), 0xc020462bu, "_IOWR('F', 0x2b, 0x20)");
}

int main(void)
{
    test_analyze_classes();
    test_traits();
    test_sim_classes();
    test_events_table();
    test_address_methods();
    test_address_lookup_as_scan();
    test_address_qmd();
    test_address_qmd_rewrite();
    test_constants();
    test_codec();
    test_abi();
    return check_finish("test_facts");
}
