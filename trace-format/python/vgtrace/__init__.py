"""vgtrace: .vgt traces of NVIDIA GPU submissions in Python.

- The core (reader.py, writer.py, records.py, spec.py, memcas.py): an independent reader and writer of the format,
  written from docs/trace-format.md alone. Two implementations of one spec check the spec: the project's
  tests feed traces written by the C library to this reader and traces written by this writer to the C
  library, and compare record by record. Needs only `zstandard` and `xxhash`.
- Iteration (iterate.py): records and submissions (pure Python), decoded methods and events (through the
  installed C library, libvgt.so.0, with ctypes: native.py).
- Tables (tables.py): submissions, methods, launches, draws, semaphores, macro calls as pandas DataFrames
  or Arrow tables; Parquet export partitioned by trace (parquet.py); `python3 -m vgtrace parquet OUT T...`.
"""
from . import spec
from .errors import (ChecksumError, FormatError, LimitError, SequenceError, TruncatedError, VersionError,
                     VgtError)
from .reader import Record, Trace, iter_stream, read_prefix, read_stream_bytes, read_trace, records_from_seq
from .records import decode_payload, encode_payload
from .writer import Writer, encode_chunk, encode_header, encode_record, encode_trailer, write_trace
from .iterate import Event, Method, iter_events, iter_methods, iter_records, iter_submissions

__all__ = [
    "spec", "VgtError", "FormatError", "VersionError", "ChecksumError", "TruncatedError", "LimitError",
    "SequenceError", "Record", "Trace", "read_trace", "read_prefix", "iter_stream", "read_stream_bytes",
    "records_from_seq", "decode_payload", "encode_payload", "Writer", "write_trace", "encode_header",
    "encode_record", "encode_chunk", "encode_trailer", "iter_records", "iter_submissions", "iter_methods",
    "iter_events", "Method", "Event",
]
