"""Errors of the Python twin: one exception type carrying a kind and the file offset of the problem,
mirroring the C library's vgt_error (kind names follow vgt_status: FORMAT, VERSION, CHECKSUM, ...)."""


class VgtError(Exception):
    kind = "FORMAT"

    def __init__(self, message, offset=None, kind=None):
        if offset is not None and "offset" not in message:
            message = f"{message} (at offset {offset})"
        super().__init__(message)
        self.offset = offset
        if kind:
            self.kind = kind


class FormatError(VgtError):
    kind = "FORMAT"


class VersionError(VgtError):
    kind = "VERSION"


class ChecksumError(VgtError):
    kind = "CHECKSUM"


class TruncatedError(VgtError):
    kind = "TRUNCATED"


class LimitError(VgtError):
    kind = "LIMIT"


class SequenceError(VgtError):
    kind = "SEQUENCE"
