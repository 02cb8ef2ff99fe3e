CREATE INDEX copies_by_dst ON copies(dst_va);
CREATE INDEX draws_by_submission ON draws(submission);
CREATE INDEX empty_dispatches_by_submission ON empty_dispatches(submission);
CREATE INDEX events_by_submission ON events(submission);
CREATE INDEX launches_by_submission ON launches(submission);
CREATE INDEX macro_calls_by_macro ON macro_calls(macro, version);
CREATE INDEX macro_calls_by_submission ON macro_calls(submission);
CREATE INDEX macro_emits_by_method ON macro_emits(method);
CREATE INDEX macros_by_hash ON macros(hash);
CREATE INDEX mappings_by_va ON mappings(gpu_va);
CREATE INDEX memory_by_va ON memory(gpu_va);
CREATE INDEX semaphores_by_submission ON semaphores(submission);
CREATE INDEX semaphores_by_va ON semaphores(va);
CREATE INDEX stores_by_submission ON stores(submission);
CREATE INDEX submissions_by_channel ON submissions(client, channel);
CREATE INDEX uploads_by_dst ON uploads(dst_va);
CREATE TABLE channels(seq INTEGER PRIMARY KEY, client INTEGER, parent INTEGER, handle INTEGER, class INTEGER, class_name TEXT, ring_va INTEGER, entries INTEGER, userd_memory INTEGER, userd_offset INTEGER, userd_gpu_va INTEGER, engine_type INTEGER, va_space INTEGER, context_share INTEGER, status INTEGER);
-- rows in channels: 8
CREATE TABLE clears(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, color_mask INTEGER, depth INTEGER, stencil INTEGER, target INTEGER, target_va INTEGER, target_format INTEGER, width INTEGER, height INTEGER, memory INTEGER, bytes INTEGER, zt_va INTEGER, raw INTEGER);
-- rows in clears: 0
CREATE TABLE copies(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, src_va INTEGER, dst_va INTEGER, bytes INTEGER, line_length INTEGER, line_count INTEGER, pitch_in INTEGER, pitch_out INTEGER, src_pitch INTEGER, dst_pitch INTEGER, multi_line INTEGER, remap INTEGER, memset INTEGER, remap_const_a INTEGER, semaphore_type INTEGER, sem_va INTEGER, sem_payload INTEGER);
-- rows in copies: 51
CREATE TABLE cuda_api(seq INTEGER PRIMARY KEY, type TEXT, api TEXT, api_number INTEGER, result INTEGER, thread INTEGER, flags INTEGER, submits_before INTEGER, submits_after INTEGER, first_submission INTEGER, submission_count INTEGER, deferred INTEGER, object INTEGER, op TEXT, dst INTEGER, src INTEGER, size INTEGER, stream INTEGER);
-- rows in cuda_api: 0
CREATE TABLE cuda_functions(seq INTEGER PRIMARY KEY, api TEXT, function INTEGER, owner INTEGER, name TEXT, result INTEGER);
-- rows in cuda_functions: 0
CREATE TABLE cuda_images(seq INTEGER PRIMARY KEY, hash INTEGER, kind TEXT, length INTEGER, data BLOB, referenced INTEGER, path TEXT, file_offset INTEGER, entries TEXT);
-- rows in cuda_images: 0
CREATE TABLE cuda_launches(seq INTEGER PRIMARY KEY, api TEXT, function INTEGER, name TEXT, stream INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER, shared_bytes INTEGER, params_length INTEGER, flags INTEGER, graph_exec INTEGER, node_index INTEGER, first_submission INTEGER, submission_count INTEGER, deferred INTEGER, qmd_va INTEGER, params BLOB);
-- rows in cuda_launches: 0
CREATE TABLE cuda_modules(seq INTEGER PRIMARY KEY, api TEXT, handle INTEGER, image_hash INTEGER, path TEXT, result INTEGER);
-- rows in cuda_modules: 0
CREATE TABLE diagnostics(id INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, entry INTEGER, dword INTEGER, kind TEXT, message TEXT);
-- rows in diagnostics: 6
CREATE TABLE draw_lints(draw INTEGER, idx INTEGER, code TEXT, message TEXT, PRIMARY KEY(draw, idx)) WITHOUT ROWID;
-- rows in draw_lints: 0
CREATE TABLE draw_stages(draw INTEGER, stage INTEGER, type TEXT, shader_set INTEGER, enabled INTEGER, register_count INTEGER, program_va INTEGER, mapped INTEGER, sph_bytes_known INTEGER, sph_state TEXT, PRIMARY KEY(draw, stage)) WITHOUT ROWID;
-- rows in draw_stages: 0
CREATE TABLE draw_state(draw INTEGER PRIMARY KEY, kind TEXT, submission INTEGER, seq INTEGER, entry INTEGER, dword INTEGER, client INTEGER, channel INTEGER, class INTEGER, origin TEXT, macro_call INTEGER, window_entry INTEGER, window_va INTEGER, window_bytes INTEGER, primitive TEXT, topology TEXT, first INTEGER, count INTEGER, instances INTEGER, index_size INTEGER, index_buffer_va INTEGER, vs_enabled INTEGER, vs_program_va INTEGER, ps_enabled INTEGER, ps_program_va INTEGER, target_count INTEGER, rt0_va INTEGER, rt0_format INTEGER, rt0_format_name TEXT, rt0_width INTEGER, rt0_height INTEGER, rt0_layout TEXT, rt0_write_mask INTEGER, zt_selected INTEGER, zt_va INTEGER, depth_test INTEGER, depth_write INTEGER, stencil_test INTEGER, viewport_width INTEGER, viewport_height INTEGER, scissor_enable INTEGER, scissor_xmin INTEGER, scissor_xmax INTEGER, scissor_ymin INTEGER, scissor_ymax INTEGER, raster_enable INTEGER, vertex_streams INTEGER, launch_qmd_va INTEGER, launch_program_va INTEGER, macros TEXT, macros_total INTEGER, clears INTEGER, lints TEXT, nlints INTEGER, json TEXT);
-- rows in draw_state: 0
CREATE TABLE draws(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, kind TEXT, topology TEXT, first INTEGER, count INTEGER, instances INTEGER, index_size INTEGER, index_buffer_va INTEGER, base_vertex INTEGER, base_instance INTEGER);
-- rows in draws: 0
CREATE TABLE empty_dispatches(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, qmd_va INTEGER, inline INTEGER, qmd_known INTEGER, qmd_version TEXT, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER, program_va INTEGER, shared_memory INTEGER, registers INTEGER, barriers INTEGER, cb_valid_mask INTEGER, cb0_va INTEGER, cb0_size INTEGER);
-- rows in empty_dispatches: 0
CREATE TABLE empty_dmas(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, src_va INTEGER, dst_va INTEGER, bytes INTEGER, line_length INTEGER, line_count INTEGER, pitch_in INTEGER, pitch_out INTEGER, src_pitch INTEGER, dst_pitch INTEGER, multi_line INTEGER, remap INTEGER, memset INTEGER, remap_const_a INTEGER, semaphore_type INTEGER, sem_va INTEGER, sem_payload INTEGER);
-- rows in empty_dmas: 41
CREATE TABLE engine_objects(seq INTEGER PRIMARY KEY, client INTEGER, channel INTEGER, handle INTEGER, class INTEGER, class_name TEXT, status INTEGER);
-- rows in engine_objects: 15
CREATE TABLE events(id INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, entry INTEGER, dword INTEGER, channel INTEGER, subch INTEGER, class INTEGER, kind TEXT, text TEXT, origin TEXT, macro_call INTEGER);
-- rows in events: 215
CREATE TABLE gpfifo_entries(submission INTEGER, entry INTEGER, seq INTEGER, raw INTEGER, va INTEGER, length INTEGER, level INTEGER, sync INTEGER, is_control INTEGER, opcode INTEGER, operand INTEGER, PRIMARY KEY(submission, entry)) WITHOUT ROWID;
-- rows in gpfifo_entries: 73
CREATE TABLE identity(key TEXT PRIMARY KEY, value TEXT);
-- rows in identity: 18
CREATE TABLE launches(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, qmd_va INTEGER, inline INTEGER, qmd_known INTEGER, qmd_version TEXT, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER, program_va INTEGER, shared_memory INTEGER, registers INTEGER, barriers INTEGER, cb_valid_mask INTEGER, cb0_va INTEGER, cb0_size INTEGER);
-- rows in launches: 0
CREATE TABLE macro_call_params(call INTEGER, idx INTEGER, value INTEGER, PRIMARY KEY(call, idx)) WITHOUT ROWID;
-- rows in macro_call_params: 9209
CREATE TABLE macro_calls(call INTEGER PRIMARY KEY, submission INTEGER, seq INTEGER, entry INTEGER, dword INTEGER, client INTEGER, channel INTEGER, subch INTEGER, class INTEGER, macro INTEGER, version INTEGER, hash TEXT, kind TEXT, nparams INTEGER, params_truncated INTEGER, nemits INTEGER, instructions INTEGER, status TEXT, error TEXT, pc INTEGER, message TEXT);
-- rows in macro_calls: 3063
CREATE TABLE macro_emits(call INTEGER, idx INTEGER, submission INTEGER, channel INTEGER, class INTEGER, address INTEGER, method TEXT, value INTEGER, fields TEXT, PRIMARY KEY(call, idx)) WITHOUT ROWID;
-- rows in macro_emits: 16840
CREATE TABLE macros(version INTEGER PRIMARY KEY, client INTEGER, channel INTEGER, channel_alloc_seq INTEGER, class INTEGER, class_name TEXT, format TEXT, macro INTEGER, start INTEGER, start_dword INTEGER, dwords INTEGER, hash TEXT, name TEXT, named_from TEXT, first_submission INTEGER, first_seq INTEGER, calls INTEGER, call_errors INTEGER, emits INTEGER, categories INTEGER, static_categories INTEGER, code BLOB, disassembly TEXT);
-- rows in macros: 254
CREATE TABLE mappings(seq INTEGER PRIMARY KEY, client INTEGER, device INTEGER, va_space INTEGER, memory INTEGER, gpu_va INTEGER, offset INTEGER, length INTEGER, flags INTEGER, source INTEGER, status INTEGER);
-- rows in mappings: 85
CREATE TABLE memory(seq INTEGER PRIMARY KEY, gpu_va INTEGER, length INTEGER, reason INTEGER, reason_name TEXT, memory INTEGER, flags INTEGER, data BLOB);
-- rows in memory: 95
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
-- rows in meta: 5
CREATE TABLE method_counts(class INTEGER, address INTEGER, method TEXT, n INTEGER);
-- rows in method_counts: 258
CREATE TABLE methods(submission INTEGER, entry INTEGER, dword INTEGER, id INTEGER, seq INTEGER, channel INTEGER, subch INTEGER, class INTEGER, method TEXT, address INTEGER, value INTEGER, fields TEXT, PRIMARY KEY(submission, entry, dword, id)) WITHOUT ROWID;
-- rows in methods: 29613
CREATE TABLE notifies(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, va INTEGER, type INTEGER);
-- rows in notifies: 3
CREATE TABLE object_frees(seq INTEGER PRIMARY KEY, client INTEGER, parent INTEGER, handle INTEGER, status INTEGER);
-- rows in object_frees: 190
CREATE TABLE objects(seq INTEGER PRIMARY KEY, kind TEXT, client INTEGER, parent INTEGER, handle INTEGER, class INTEGER, class_name TEXT, size INTEGER, aperture INTEGER, status INTEGER);
-- rows in objects: 232
CREATE TABLE program_binds(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, stage INTEGER, type INTEGER, enabled INTEGER, program_va INTEGER, registers INTEGER);
-- rows in program_binds: 0
CREATE TABLE records(seq INTEGER PRIMARY KEY, type INTEGER, type_name TEXT, ts INTEGER, flags INTEGER, length INTEGER);
-- rows in records: 1762
CREATE TABLE semaphores(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, kind TEXT, source TEXT, op TEXT, va INTEGER, payload INTEGER, size INTEGER, reduction TEXT, flags INTEGER, report INTEGER);
-- rows in semaphores: 117
CREATE TABLE sph(draw INTEGER, stage INTEGER, program_va INTEGER, version INTEGER, sph_type TEXT, shader_type TEXT, does_global_store INTEGER, does_load_or_store INTEGER, kills_pixels INTEGER, mrt_enable INTEGER, stream_out_mask INTEGER, omap_target INTEGER, omap_depth INTEGER, omap_sample_mask INTEGER, output_components INTEGER, no_outputs INTEGER, word5 INTEGER, word10 INTEGER, word18 INTEGER, words TEXT, fields TEXT, PRIMARY KEY(draw, stage)) WITHOUT ROWID;
-- rows in sph: 0
CREATE TABLE stores(id INTEGER PRIMARY KEY, submission INTEGER, seq INTEGER, channel INTEGER, what TEXT, va INTEGER, length INTEGER, pages_written INTEGER, bytes_changed INTEGER, first_changed INTEGER, first_nonzero_pixel INTEGER, px0 INTEGER, draw INTEGER, draw_count INTEGER);
-- rows in stores: 0
CREATE TABLE submissions(submission INTEGER PRIMARY KEY, seq INTEGER UNIQUE, ts INTEGER, client INTEGER, channel INTEGER, token INTEGER, flags INTEGER, entry_count INTEGER, segment_count INTEGER, gp_put_before INTEGER, gp_put_after INTEGER, methods INTEGER);
-- rows in submissions: 17
CREATE TABLE unmappings(seq INTEGER PRIMARY KEY, client INTEGER, device INTEGER, va_space INTEGER, memory INTEGER, gpu_va INTEGER, length INTEGER, source INTEGER, status INTEGER);
-- rows in unmappings: 79
CREATE TABLE uploads(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, dst_va INTEGER, length INTEGER, line_length INTEGER, line_count INTEGER, pitch_out INTEGER, pitch INTEGER, complete INTEGER, data BLOB);
-- rows in uploads: 3
CREATE TABLE window_lints(submission INTEGER, seq INTEGER, entry INTEGER, window_bytes INTEGER, channel INTEGER, class INTEGER, macros TEXT, code TEXT, message TEXT);
-- rows in window_lints: 0
CREATE VIEW compute_submissions AS SELECT submission, count(*) AS launches, sum(grid_x * grid_y * grid_z) AS ctas FROM launches GROUP BY submission;
CREATE VIEW cuda_api_entries AS SELECT a.seq AS api_seq, a.api, e.submission, e.entry, e.raw, e.va, e.length, e.is_control FROM cuda_api a JOIN gpfifo_entries e ON e.submission >= a.first_submission AND e.submission < a.first_submission + a.submission_count;
CREATE VIEW cuda_api_submissions AS SELECT a.seq AS api_seq, a.api, a.thread, a.deferred, s.submission, s.seq AS submission_seq, s.channel, s.entry_count FROM cuda_api a JOIN submissions s ON s.submission >= a.first_submission AND s.submission < a.first_submission + a.submission_count;
CREATE VIEW method_histogram AS SELECT class, method, n FROM method_counts;
CREATE VIEW semaphore_releases AS SELECT submission, seq, source, op, va, payload, size, reduction FROM semaphores WHERE kind = 'release';
CREATE VIEW submission_stores AS SELECT submission, seq, channel, count(*) AS ranges, sum(pages_written) AS pages_written, sum(bytes_changed) AS bytes_changed, sum(CASE WHEN what = 'render-target' THEN bytes_changed ELSE 0 END) AS render_target_bytes, min(CASE WHEN what = 'render-target' THEN first_nonzero_pixel END) AS render_target_first_nonzero_px, (SELECT t.px0 FROM stores t WHERE t.submission = stores.submission AND t.what = 'render-target' ORDER BY t.id LIMIT 1) AS render_target_px0 FROM stores GROUP BY submission;
CREATE VIEW submission_summary AS SELECT s.submission, s.seq, s.channel, s.methods, (SELECT count(*) FROM launches l WHERE l.submission = s.submission) AS launches, (SELECT count(*) FROM empty_dispatches l WHERE l.submission = s.submission) AS empty_dispatches, (SELECT count(*) FROM draws d WHERE d.submission = s.submission) AS draws, (SELECT count(*) FROM uploads u WHERE u.submission = s.submission) AS uploads, (SELECT count(*) FROM copies c WHERE c.submission = s.submission) AS copies, (SELECT count(*) FROM empty_dmas c WHERE c.submission = s.submission) AS empty_dmas, (SELECT count(*) FROM semaphores m WHERE m.submission = s.submission AND m.kind = 'release') AS releases, (SELECT count(*) FROM semaphores m WHERE m.submission = s.submission AND m.kind = 'acquire') AS acquires FROM submissions s;
CREATE VIEW window_macros AS SELECT c.submission, c.seq, c.entry, e.length * 4 AS window_bytes, c.channel, count(*) AS calls, group_concat(printf('0x%x', c.macro), ',') AS macros FROM (SELECT * FROM macro_calls ORDER BY call) c LEFT JOIN gpfifo_entries e ON e.seq = c.seq AND e.entry = c.entry GROUP BY c.seq, c.entry, c.channel;
CREATE VIEW writes AS SELECT submission, seq, 'upload' AS how, dst_va AS va, length AS bytes FROM uploads UNION ALL SELECT submission, seq, CASE WHEN memset THEN 'memset' ELSE 'copy' END, dst_va, bytes FROM copies UNION ALL SELECT submission, seq, 'semaphore:' || source, va, size FROM semaphores WHERE kind IN ('release', 'report') UNION ALL SELECT submission, seq, 'clear', target_va, bytes FROM clears WHERE color_mask != 0 AND target_format != 0 UNION ALL SELECT submission, seq, 'clear:zeta', zt_va, NULL FROM clears WHERE (depth != 0 OR stencil != 0) AND zt_va != 0 UNION ALL SELECT submission, seq, 'notify', va, 16 FROM notifies;
