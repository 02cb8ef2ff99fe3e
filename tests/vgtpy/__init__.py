"""vgtpy: the independent Python reader and writer of .vgt traces, written from docs/trace-format.md alone.

Two implementations of one spec check the spec: tests/py/test_vgtpy*.py feed traces written by the C
library to this reader and traces written by this writer to the C library, and compare record by record.
Needs the PyPI packages `zstandard` and `xxhash`.
"""
from . import spec
from .errors import (ChecksumError, FormatError, LimitError, SequenceError, TruncatedError, VersionError,
                     VgtError)
from .reader import Record, Trace, iter_stream, read_prefix, read_stream_bytes, read_trace, records_from_seq
from .records import decode_payload, encode_payload
from .writer import Writer, encode_chunk, encode_header, encode_record, encode_trailer, write_trace

__all__ = [
    "spec", "VgtError", "FormatError", "VersionError", "ChecksumError", "TruncatedError", "LimitError",
    "SequenceError", "Record", "Trace", "read_trace", "read_prefix", "iter_stream", "read_stream_bytes",
    "records_from_seq", "decode_payload", "encode_payload", "Writer", "write_trace", "encode_header",
    "encode_record", "encode_chunk", "encode_trailer",
]
