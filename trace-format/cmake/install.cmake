# install.cmake: libvgt.so and what `cmake --install` puts in place. Included last by the top-level
# CMakeLists.txt (it needs every part's targets):
#   bin/vgt, lib/libvgt-capture.so                   the tool and the capture shim (vgt finds ../lib/...)
#   lib/libvgt.so.N (SONAME libvgt.so.N, N = VGT_ABI)  the shared library: traces read and written,
#                                                      submissions decoded (the stable C API below)
#   include/vgt/*.h                                    its public headers
#   lib/cmake/vgtrace/                                 find_package(vgtrace) -> vgtrace::vgt
#   lib/pkgconfig/vgtrace.pc                           pkg-config --cflags --libs vgtrace
#   share/man/man1, share/bash-completion, share/zsh   generated from the verbs' option tables
#
# The API surface is the installed headers: records, writer and reader (trace.h), errors (error.h), the
# trace model (model.h), GPFIFO and push-buffer decoding (pushbuf.h), the walk (walk.h), semantic events
# and QMDs (events.h, qmd.h), the block-linear layout a copy's sides use (blocklinear.h), class and method
# names (classes.h), flat tables (rows.h), the version (version.h). Only the functions those headers declare are exported (a version script made from them
# at configure time); everything else stays inside the library.
include(CMakePackageConfigHelpers)

set(VGT_INSTALL_LIBDIR lib)   # fixed: vgt finds the capture shim at ../lib from bin/
set(VGT_PUBLIC_HEADERS
    ${CMAKE_SOURCE_DIR}/trace-format/include/vgt/error.h
    ${CMAKE_SOURCE_DIR}/trace-format/include/vgt/trace.h
    ${CMAKE_SOURCE_DIR}/trace-format/include/vgt/model.h
    ${CMAKE_SOURCE_DIR}/trace-format/include/vgt/version.h
    ${CMAKE_SOURCE_DIR}/trace-format/include/vgt/nv_facts.h
    ${CMAKE_SOURCE_DIR}/trace-format/include/vgt/nv_pushbuf.h
    ${CMAKE_SOURCE_DIR}/analyze/include/vgt/pushbuf.h
    ${CMAKE_SOURCE_DIR}/analyze/include/vgt/walk.h
    ${CMAKE_SOURCE_DIR}/analyze/include/vgt/qmd.h
    ${CMAKE_SOURCE_DIR}/analyze/include/vgt/events.h
    ${CMAKE_SOURCE_DIR}/analyze/include/vgt/blocklinear.h
    ${CMAKE_SOURCE_DIR}/analyze/include/vgt/classes.h
    ${CMAKE_SOURCE_DIR}/analyze/include/vgt/rows.h)

# The ABI number: VGT_ABI in version.h, so the SONAME and the header cannot disagree.
file(STRINGS ${CMAKE_SOURCE_DIR}/trace-format/include/vgt/version.h _abi_line REGEX "^#define VGT_ABI [0-9]+")
string(REGEX REPLACE "^#define VGT_ABI ([0-9]+).*" "\\1" VGT_ABI "${_abi_line}")

# The version script: every function the public headers declare (not their static inline helpers).
set(_exports "")
foreach(h ${VGT_PUBLIC_HEADERS})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${h})
  file(STRINGS ${h} _decls REGEX "^[a-z].*[ *](vgt_[a-z0-9_]+)\\(")
  foreach(d ${_decls})
    if(d MATCHES "^static " OR d MATCHES "^typedef ")
      continue()
    endif()
    string(REGEX MATCH "[ *](vgt_[a-z0-9_]+)\\(" _m "${d}")
    string(REGEX REPLACE "^[ *]|\\($" "" _name "${_m}")
    list(APPEND _exports "${_name}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES _exports)
list(SORT _exports)
list(JOIN _exports ";\n    " _export_text)
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/generated/libvgt.map
     CONTENT "/* libvgt.map: made by trace-format/cmake/install.cmake from the public headers; do not edit. */\nVGT_${VGT_ABI} {\n  global:\n    ${_export_text};\n  local: *;\n};\n")

add_library(vgt_shared SHARED ${CMAKE_SOURCE_DIR}/trace-format/lib/libvgt.c)
target_link_libraries(vgt_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,vgt_analyze>"
                      ${VGT_LIB_ZSTD} ${VGT_LIB_XXHASH} ${VGT_LIB_SQLITE} m)
# vgt_analyze brings vgt_format again (its own link interface): whole there too
set_property(TARGET vgt_shared PROPERTY LINK_LIBRARY_OVERRIDE_vgt_format WHOLE_ARCHIVE)
target_include_directories(vgt_shared PUBLIC
    $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/trace-format/include>
    $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/analyze/include>
    $<BUILD_INTERFACE:${VGT_FACTS_INCLUDE}>
    $<INSTALL_INTERFACE:include>)
target_compile_definitions(vgt_shared PRIVATE VGT_VERSION_STRING="${PROJECT_VERSION}")
target_link_options(vgt_shared PRIVATE -Wl,--version-script=${CMAKE_BINARY_DIR}/generated/libvgt.map)
if(NOT VGT_SANITIZE AND NOT VGT_FUZZ)
  # every symbol resolved at link time (sanitizer and coverage runtimes come from the executable instead)
  target_link_options(vgt_shared PRIVATE -Wl,--no-undefined)
endif()
set_target_properties(vgt_shared PROPERTIES OUTPUT_NAME vgt EXPORT_NAME vgt VERSION ${PROJECT_VERSION}
                      SOVERSION ${VGT_ABI} LINK_DEPENDS ${CMAKE_BINARY_DIR}/generated/libvgt.map)

install(TARGETS vgt RUNTIME DESTINATION bin)
if(TARGET vgt-capture)
  install(TARGETS vgt-capture LIBRARY DESTINATION ${VGT_INSTALL_LIBDIR})
endif()
install(TARGETS vgt_shared EXPORT vgtrace-targets
        LIBRARY DESTINATION ${VGT_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        INCLUDES DESTINATION include)
install(FILES ${VGT_PUBLIC_HEADERS} DESTINATION include/vgt)
# the NVIDIA facts the public headers include, generated into the build tree (trace-format/facts)
install(FILES ${VGT_FACTS_INCLUDE}/vgt/nv_facts_gen.h ${VGT_FACTS_INCLUDE}/vgt/nv_classes.h DESTINATION include/vgt)
install(DIRECTORY ${VGT_FACTS_INCLUDE}/vgt/nv DESTINATION include/vgt FILES_MATCHING PATTERN "*.h")
install(EXPORT vgtrace-targets NAMESPACE vgtrace:: DESTINATION ${VGT_INSTALL_LIBDIR}/cmake/vgtrace)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/vgtraceConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/generated/vgtraceConfig.cmake
                              INSTALL_DESTINATION ${VGT_INSTALL_LIBDIR}/cmake/vgtrace)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/generated/vgtraceConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/generated/vgtraceConfig.cmake ${CMAKE_BINARY_DIR}/generated/vgtraceConfigVersion.cmake
        DESTINATION ${VGT_INSTALL_LIBDIR}/cmake/vgtrace)
configure_file(${CMAKE_CURRENT_LIST_DIR}/vgtrace.pc.in ${CMAKE_BINARY_DIR}/generated/vgtrace.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/generated/vgtrace.pc DESTINATION ${VGT_INSTALL_LIBDIR}/pkgconfig)
# man pages and completions: written next to the build's vgt after it links (`vgt __generate`)
install(DIRECTORY ${CMAKE_BINARY_DIR}/share/ DESTINATION share)
