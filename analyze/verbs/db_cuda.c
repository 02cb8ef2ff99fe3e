/* db_cuda.c: the CUDA driver API records (format 1.2) in `vgt db` (docs/sqlite-schema.md, "CUDA"): every
 * call in cuda_api with the submissions it caused (the link rule of vgt/cuda.h), loads in cuda_modules,
 * lookups in cuda_functions, launches in cuda_launches, images in cuda_images. After the walk
 * (db_cuda_finish) the links only the whole trace decides: a deferred link naming a submission past the
 * last is dropped, each launch gets its function's name and the QMD that the first launch of its grid and
 * block in its linked submissions ran (the launches table, from the decoded push buffers). */
#include <string.h>

#include "db_internal.h"
#include "vgt/cuda.h"

static void bind_text_n(sqlite3_stmt *st, int i, const char *s, uint32_t n)
{
    sqlite3_bind_text(st, i, s ? s : "", (int)n, SQLITE_TRANSIENT);
}

static void bind_api(sqlite3_stmt *st, int i, uint32_t api)
{
    const char *n = vgt_cuda_api_name(api);
    if (n) sqlite3_bind_text(st, i, n, -1, SQLITE_STATIC);
    else sqlite3_bind_int64(st, i, api);
}

/* The cuda_api row every API record has. */
static int api_row(db_ctx *c, const vgt_record *rec, const vgt_cuda_call_head *h, uint64_t object, const char *op,
                   uint64_t dst, uint64_t src, uint64_t size, uint64_t stream)
{
    sqlite3_stmt *st = c->st[ST_CUDA_API];
    vgt_cuda_link l;
    vgt_cuda_link_of(h, UINT64_MAX, &l);   /* a deferred link past the end is dropped at the finish */
    db_bind_u64(st, 1, rec->seq);
    sqlite3_bind_text(st, 2, vgt_rec_type_name(rec->type), -1, SQLITE_STATIC);
    bind_api(st, 3, h->api);
    sqlite3_bind_int64(st, 4, h->api);
    sqlite3_bind_int64(st, 5, h->result);
    sqlite3_bind_int64(st, 6, h->thread);
    sqlite3_bind_int64(st, 7, h->flags);
    db_bind_u64(st, 8, h->submits_before);
    db_bind_u64(st, 9, h->submits_after);
    db_bind_u64(st, 10, l.first);
    db_bind_u64(st, 11, vgt_cuda_does_work(rec, h) || !l.deferred ? l.count : 0);
    sqlite3_bind_int64(st, 12, l.deferred);
    db_bind_u64(st, 13, object);
    if (op) sqlite3_bind_text(st, 14, op, -1, SQLITE_STATIC); else sqlite3_bind_null(st, 14);
    db_bind_u64(st, 15, dst);
    db_bind_u64(st, 16, src);
    db_bind_u64(st, 17, size);
    db_bind_u64(st, 18, stream);
    return db_step(c, st, "cuda_api");
}

static int image_row(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_cuda_image im;
    if (vgt_decode_cuda_image(rec, &im, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_CUDA_IMAGE];
    db_bind_u64(st, 1, rec->seq);
    db_bind_u64(st, 2, im.hash);
    sqlite3_bind_text(st, 3, vgt_cuda_image_kind_name(im.kind), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, im.image_length);
    if (c->with_bytes) sqlite3_bind_blob(st, 5, im.image, (int)im.image_length, SQLITE_STATIC);
    else sqlite3_bind_null(st, 5);
    sqlite3_bind_int64(st, 6, 0);
    for (int i = 7; i <= 9; i++) sqlite3_bind_null(st, i);
    return db_step(c, st, "cuda_images");
}

/* An image referenced by file (format 1.5): no bytes; where they are, and what the fatbin held. */
static int image_ref_row(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_cuda_image_ref im;
    if (vgt_decode_cuda_image_ref(rec, &im, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_CUDA_IMAGE];
    char entries[4096];
    vgt_cuda_image_ref_entries_text(&im, entries, sizeof entries);
    db_bind_u64(st, 1, rec->seq);
    db_bind_u64(st, 2, im.hash);
    sqlite3_bind_text(st, 3, vgt_cuda_image_kind_name(im.kind), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, im.image_length);
    sqlite3_bind_null(st, 5);
    sqlite3_bind_int64(st, 6, 1);
    sqlite3_bind_text(st, 7, im.path, (int)im.path_length, SQLITE_TRANSIENT);
    db_bind_u64(st, 8, im.file_offset);
    if (im.entries_length) sqlite3_bind_text(st, 9, entries, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, 9);
    return db_step(c, st, "cuda_images");
}

static int load_row(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_cuda_load l;
    if (vgt_decode_cuda_load(rec, &l, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_CUDA_MODULE];
    db_bind_u64(st, 1, rec->seq);
    bind_api(st, 2, l.call.api);
    db_bind_u64(st, 3, l.handle);
    db_bind_u64(st, 4, l.image_hash);
    bind_text_n(st, 5, l.path, l.path_length);
    sqlite3_bind_int64(st, 6, l.call.result);
    return db_step(c, st, "cuda_modules") || api_row(c, rec, &l.call, l.handle, NULL, 0, 0, 0, 0);
}

static int function_row(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_cuda_function f;
    if (vgt_decode_cuda_function(rec, &f, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_CUDA_FUNCTION];
    db_bind_u64(st, 1, rec->seq);
    bind_api(st, 2, f.call.api);
    db_bind_u64(st, 3, f.function);
    db_bind_u64(st, 4, f.owner);
    bind_text_n(st, 5, f.name, f.name_length);
    sqlite3_bind_int64(st, 6, f.call.result);
    return db_step(c, st, "cuda_functions") || api_row(c, rec, &f.call, f.function, NULL, 0, 0, 0, 0);
}

static int launch_row(db_ctx *c, const vgt_record *rec)
{
    vgt_rec_cuda_kernel k;
    if (vgt_decode_cuda_kernel(rec, &k, &c->err) != VGT_OK) return c->failed = 1;
    sqlite3_stmt *st = c->st[ST_CUDA_LAUNCH];
    vgt_cuda_link l;
    vgt_cuda_link_of(&k.call, UINT64_MAX, &l);
    int work = vgt_cuda_does_work(rec, &k.call);
    db_bind_u64(st, 1, rec->seq);
    bind_api(st, 2, k.call.api);
    db_bind_u64(st, 3, k.function);
    sqlite3_bind_null(st, 4);
    db_bind_u64(st, 5, k.stream);
    for (int i = 0; i < 3; i++) sqlite3_bind_int64(st, 6 + i, k.grid[i]), sqlite3_bind_int64(st, 9 + i, k.block[i]);
    sqlite3_bind_int64(st, 12, k.shared_bytes);
    sqlite3_bind_int64(st, 13, k.params_length);
    sqlite3_bind_int64(st, 14, k.call.flags);
    db_bind_u64(st, 15, k.graph_exec);
    sqlite3_bind_int64(st, 16, k.node_index);
    db_bind_u64(st, 17, l.first);
    db_bind_u64(st, 18, work ? l.count : 0);
    sqlite3_bind_int64(st, 19, l.deferred);
    if (c->with_bytes) sqlite3_bind_blob(st, 20, k.params, (int)k.params_length, SQLITE_STATIC);
    else sqlite3_bind_null(st, 20);
    return db_step(c, st, "cuda_launches") || api_row(c, rec, &k.call, k.function, NULL, 0, 0, 0, k.stream);
}

int db_cuda_rows(db_ctx *c, const vgt_record *rec)
{
    switch (rec->type) {
    case VGT_REC_CUDA_IMAGE: return image_row(c, rec);
    case VGT_REC_CUDA_IMAGE_REF: return image_ref_row(c, rec);
    case VGT_REC_CUDA_LOAD: return load_row(c, rec);
    case VGT_REC_CUDA_FUNCTION: return function_row(c, rec);
    case VGT_REC_CUDA_KERNEL: return launch_row(c, rec);
    case VGT_REC_CUDA_MEMORY: {
        vgt_rec_cuda_memory m;
        if (vgt_decode_cuda_memory(rec, &m, &c->err) != VGT_OK) return c->failed = 1;
        return api_row(c, rec, &m.call, m.graph_exec, vgt_cuda_op_name(m.op), m.dst, m.src, m.size, m.stream);
    }
    case VGT_REC_CUDA_CALL: {
        vgt_rec_cuda_call k;
        if (vgt_decode_cuda_call(rec, &k, &c->err) != VGT_OK) return c->failed = 1;
        return api_row(c, rec, &k.call, k.object, NULL, k.arg0, k.arg1, 0, 0);
    }
    default: return 0;
    }
}

int db_cuda_finish(db_ctx *c)
{
    char sql[2048];
    snprintf(sql, sizeof sql,
             "UPDATE cuda_api SET submission_count = 0 WHERE deferred = 1 AND first_submission >= %llu;"
             "UPDATE cuda_launches SET submission_count = 0 WHERE deferred = 1 AND first_submission >= %llu;"
             "UPDATE cuda_launches SET name = (SELECT f.name FROM cuda_functions f WHERE f.function ="
             " cuda_launches.function AND f.seq < cuda_launches.seq AND f.result = 0 ORDER BY f.seq DESC LIMIT 1);"
             "UPDATE cuda_launches SET qmd_va = (SELECT l.qmd_va FROM launches l WHERE l.submission >="
             " cuda_launches.first_submission AND l.submission < cuda_launches.first_submission +"
             " cuda_launches.submission_count AND l.grid_x = cuda_launches.grid_x AND l.grid_y = cuda_launches.grid_y"
             " AND l.grid_z = cuda_launches.grid_z AND l.block_x = cuda_launches.block_x AND l.block_y ="
             " cuda_launches.block_y AND l.block_z = cuda_launches.block_z ORDER BY l.event LIMIT 1)"
             " WHERE submission_count > 0;",
             (unsigned long long)c->cuda_submits, (unsigned long long)c->cuda_submits);
    char *msg = NULL;
    if (sqlite3_exec(c->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        if (!c->failed) vgt_fail(&c->err, VGT_E_IO, VGT_NO_OFFSET, "sqlite: linking the CUDA calls: %s", msg ? msg : "?");
        sqlite3_free(msg);
        return c->failed = 1;
    }
    return 0;
}
