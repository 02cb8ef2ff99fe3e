# check_undefined.cmake: fail when an object file needs any symbol it does not define (nm -u is empty).
# OBJS is a ;-list of object files.
string(REPLACE ";" " " _shown "${OBJS}")
set(OBJS_LIST ${OBJS})
execute_process(COMMAND ${NM} -u -A ${OBJS_LIST} OUTPUT_VARIABLE undefined RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${_shown}")
endif()
string(STRIP "${undefined}" undefined)
if(NOT undefined STREQUAL "")
  message(FATAL_ERROR "the freestanding objects need symbols from outside:\n${undefined}")
endif()
message(STATUS "no undefined symbols in ${_shown}")
