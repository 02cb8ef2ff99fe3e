/* libvgt.c: the shared library's own part (vgt/version.h). libvgt.so is the static libraries vgt_format
 * and vgt_analyze linked whole, exporting only the functions of the installed headers
 * (trace-format/cmake/install.cmake); this file says which release and ABI it is. */
#include "vgt/version.h"

const char *vgt_library_version(void) { return VGT_VERSION_STRING; }
int vgt_library_abi(void) { return VGT_ABI; }
