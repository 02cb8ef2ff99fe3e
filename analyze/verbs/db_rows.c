/* db_rows.c: rows of `vgt db` for the records that are not submissions: every record in `records`, and
 * identity, objects, frees, channels, engine objects, mappings, unmappings and memory records in their
 * tables (docs/sqlite-schema.md). */
#include <string.h>

#include "db_internal.h"
#include "vgt/classes.h"
#include "vgt/cuda.h"

static void bind_class(sqlite3_stmt *st, int i, uint32_t cls)
{
    char buf[32];
    const char *name = vgt_class_name(cls, buf, sizeof buf);
    sqlite3_bind_text(st, i, name, -1, SQLITE_TRANSIENT);
}

static int row_object_rm(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_rm_alloc a;
    if (vgt_decode_rm_alloc(rec, &a, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_OBJECT];
    db_bind_u64(st, 1, rec->seq);
    sqlite3_bind_text(st, 2, "rm", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, a.client); sqlite3_bind_int64(st, 4, a.parent); sqlite3_bind_int64(st, 5, a.handle);
    sqlite3_bind_int64(st, 6, a.cls); bind_class(st, 7, a.cls);
    sqlite3_bind_null(st, 8); sqlite3_bind_null(st, 9);
    sqlite3_bind_int64(st, 10, a.status);
    return db_step(c, st, "objects");
}

static int row_object_mem(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_mem_alloc a;
    if (vgt_decode_mem_alloc(rec, &a, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_OBJECT];
    db_bind_u64(st, 1, rec->seq);
    sqlite3_bind_text(st, 2, "memory", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, a.client); sqlite3_bind_int64(st, 4, a.parent); sqlite3_bind_int64(st, 5, a.handle);
    sqlite3_bind_int64(st, 6, a.cls); bind_class(st, 7, a.cls);
    db_bind_u64(st, 8, a.size); sqlite3_bind_int64(st, 9, a.aperture);
    sqlite3_bind_int64(st, 10, a.status);
    return db_step(c, st, "objects");
}

static int row_free(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_rm_free f;
    if (vgt_decode_rm_free(rec, &f, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_FREE];
    db_bind_u64(st, 1, rec->seq);
    sqlite3_bind_int64(st, 2, f.client); sqlite3_bind_int64(st, 3, f.parent); sqlite3_bind_int64(st, 4, f.handle);
    sqlite3_bind_int64(st, 5, f.status);
    return db_step(c, st, "object_frees");
}

static int row_channel(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_channel ch;
    if (vgt_decode_channel(rec, &ch, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_CHANNEL];
    db_bind_u64(st, 1, rec->seq);
    sqlite3_bind_int64(st, 2, ch.client); sqlite3_bind_int64(st, 3, ch.parent); sqlite3_bind_int64(st, 4, ch.handle);
    sqlite3_bind_int64(st, 5, ch.cls); bind_class(st, 6, ch.cls);
    db_bind_u64(st, 7, ch.ring_va); sqlite3_bind_int64(st, 8, ch.entries); sqlite3_bind_int64(st, 9, ch.userd_memory);
    db_bind_u64(st, 10, ch.userd_offset); db_bind_u64(st, 11, ch.userd_gpu_va);
    sqlite3_bind_int64(st, 12, ch.engine_type); sqlite3_bind_int64(st, 13, ch.va_space);
    sqlite3_bind_int64(st, 14, ch.context_share); sqlite3_bind_int64(st, 15, ch.status);
    return db_step(c, st, "channels");
}

static int row_engine(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_engine_object e;
    if (vgt_decode_engine_object(rec, &e, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_ENGINE];
    db_bind_u64(st, 1, rec->seq);
    sqlite3_bind_int64(st, 2, e.client); sqlite3_bind_int64(st, 3, e.channel); sqlite3_bind_int64(st, 4, e.handle);
    sqlite3_bind_int64(st, 5, e.cls); bind_class(st, 6, e.cls); sqlite3_bind_int64(st, 7, e.status);
    return db_step(c, st, "engine_objects");
}

static int row_map(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_gpu_map m;
    if (vgt_decode_gpu_map(rec, &m, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_MAPPING];
    db_bind_u64(st, 1, rec->seq);
    sqlite3_bind_int64(st, 2, m.client); sqlite3_bind_int64(st, 3, m.device); sqlite3_bind_int64(st, 4, m.va_space);
    sqlite3_bind_int64(st, 5, m.memory); db_bind_u64(st, 6, m.gpu_va); db_bind_u64(st, 7, m.offset);
    db_bind_u64(st, 8, m.length); sqlite3_bind_int64(st, 9, m.flags); sqlite3_bind_int64(st, 10, m.source);
    sqlite3_bind_int64(st, 11, m.status);
    return db_step(c, st, "mappings");
}

static int row_unmap(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_gpu_unmap m;
    if (vgt_decode_gpu_unmap(rec, &m, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_UNMAP];
    db_bind_u64(st, 1, rec->seq);
    sqlite3_bind_int64(st, 2, m.client); sqlite3_bind_int64(st, 3, m.device); sqlite3_bind_int64(st, 4, m.va_space);
    sqlite3_bind_int64(st, 5, m.memory); db_bind_u64(st, 6, m.gpu_va); db_bind_u64(st, 7, m.length);
    sqlite3_bind_int64(st, 8, m.source); sqlite3_bind_int64(st, 9, m.status);
    return db_step(c, st, "unmappings");
}

static int row_memory(db_ctx *c, const vgt_record *rec)
{
    static const char *const reasons[] = { "initial", "changed", "observed" };
    vgt_rec_memory m;
    if (vgt_decode_memory(rec, &m, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_MEMORY];
    db_bind_u64(st, 1, rec->seq);
    db_bind_u64(st, 2, m.gpu_va); sqlite3_bind_int64(st, 3, m.length); sqlite3_bind_int64(st, 4, m.reason);
    sqlite3_bind_text(st, 5, m.reason < 3 ? reasons[m.reason] : "unknown", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, m.memory); sqlite3_bind_int64(st, 7, m.flags);
    if (c->with_bytes) sqlite3_bind_blob(st, 8, m.data, (int)m.length, SQLITE_STATIC);
    else sqlite3_bind_null(st, 8);
    return db_step(c, st, "memory");
}

int db_record_rows(db_ctx *c, const vgt_record *rec)
{
    sqlite3_stmt *st = c->st[ST_RECORD];
    const char *name = vgt_rec_type_name(rec->type);
    db_bind_u64(st, 1, rec->seq);
    sqlite3_bind_int64(st, 2, rec->type);
    if (name) sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC); else sqlite3_bind_null(st, 3);
    db_bind_u64(st, 4, rec->ts);
    sqlite3_bind_int64(st, 5, rec->flags);
    sqlite3_bind_int64(st, 6, rec->length);
    if (db_step(c, st, "records")) return 1;
    if (rec->type == VGT_REC_GPFIFO_SUBMIT) c->cuda_submits++;
    if (rec->type == VGT_REC_CUDA_IMAGE || rec->type == VGT_REC_CUDA_IMAGE_REF || vgt_rec_is_cuda_api(rec->type)) return db_cuda_rows(c, rec);
    switch (rec->type) {
    case VGT_REC_RM_ALLOC: return row_object_rm(c, rec);
    case VGT_REC_MEM_ALLOC: return row_object_mem(c, rec);
    case VGT_REC_RM_FREE: return row_free(c, rec);
    case VGT_REC_CHANNEL: return row_channel(c, rec);
    case VGT_REC_ENGINE_OBJECT: return row_engine(c, rec);
    case VGT_REC_GPU_MAP: return row_map(c, rec);
    case VGT_REC_GPU_UNMAP: return row_unmap(c, rec);
    case VGT_REC_MEMORY: return row_memory(c, rec);
    default: return 0;
    }
}
