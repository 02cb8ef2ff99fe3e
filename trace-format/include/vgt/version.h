/* version.h: which libvgt this is, at run time.
 *
 * libvgt.so.N: N is the ABI (the SONAME's number). It changes only when a public function, type or
 * record layout of the installed headers changes incompatibly; additions keep it. A program can check
 * that the library it loaded is the one it was built for:
 *     if (vgt_library_abi() != VGT_ABI) ...   // VGT_ABI: the ABI of the headers compiled against
 */
#ifndef VGT_VERSION_H
#define VGT_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define VGT_ABI 0

/* "0.1.0": the vgtrace release the library comes from. */
const char *vgt_library_version(void);
/* The ABI the library implements (VGT_ABI of its own headers). */
int vgt_library_abi(void);

#ifdef __cplusplus
}
#endif
#endif
