"""Write the Python-made seeds of the reader fuzzer (tests/fuzz/corpus_reader/): small traces holding every
record type, in zstd and stored chunks, with and without a trailer. Deterministic; run from the repo root:

    python3 tests/fuzz/make_reader_seeds.py tests/fuzz/corpus_reader

(The C-written seed there comes from `vgt synth -o synth_all_types.vgt --shape all-types --channels 1
--memory-pages 4 --submits 2 --seed 1 --level 19`.)"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "trace-format", "python"))

from vgtrace import samples, spec, write_trace  # noqa: E402


def small_records():
    out = []
    for r in samples.all_type_records(seed=7):
        if r[0] == "MEMORY" and len(r[1]["data"]) > 64:
            r = (r[0], dict(r[1], data=r[1]["data"][:64]), r[2])
        out.append(r)
    return out


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    recs = small_records()
    ident = (("producer", "vgtpy"), ("capture_mode", "synthetic"))
    write_trace(os.path.join(outdir, "py_all_types_zstd.vgt"), recs, ident, chunk_target=512)
    write_trace(os.path.join(outdir, "py_all_types_stored_no_trailer.vgt"), recs, ident,
                codec=spec.CODEC_STORED, chunk_target=256, trailer=False)
    write_trace(os.path.join(outdir, "py_one_chunk_stored.vgt"), recs[:6], ident, codec=spec.CODEC_STORED)
    write_trace(os.path.join(outdir, "py_minimal.vgt"), [("MARKER", {"text": b"m"}, 1)], (), codec=spec.CODEC_STORED)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz/corpus_reader")
