# trace-format/facts: the NVIDIA facts as data, turned into C at build time (included by
# trace-format/CMakeLists.txt, so the rules belong to vgt_format's directory). Outputs go to the build tree:
#   ${VGT_FACTS_INCLUDE}/vgt/nv/clXXXX.h, vgt/nv_classes.h   method offsets, fields, enums (gen_classes.py headers)
#   ${VGT_FACTS_INCLUDE}/vgt/nv_facts_gen.h, nv_facts_table.c families, traits, address operands (facts)
#   ${VGT_FACTS_INCLUDE}/vgt/nv_abi.h                        the RM/UVM ABI (gen_abi.py)
# analyze/CMakeLists.txt makes analyze's decoding tables from the same .cls files (gen_classes.py table).
# Adding a class is adding a .cls file (CONFIGURE_DEPENDS picks it up on the next build).
set(VGT_FACTS_DIR ${CMAKE_CURRENT_LIST_DIR})
set(VGT_FACTS_INCLUDE ${CMAKE_CURRENT_BINARY_DIR}/include)
set(VGT_FACTS_GEN ${VGT_FACTS_DIR}/gen_classes.py)
file(GLOB VGT_CLASS_TABLES CONFIGURE_DEPENDS ${VGT_FACTS_DIR}/classes/*.cls)

set(VGT_CLASS_HEADERS ${VGT_FACTS_INCLUDE}/vgt/nv_classes.h)
foreach(t ${VGT_CLASS_TABLES})
  get_filename_component(_n ${t} NAME)
  string(SUBSTRING ${_n} 0 4 _id)
  list(APPEND VGT_CLASS_HEADERS ${VGT_FACTS_INCLUDE}/vgt/nv/cl${_id}.h)
endforeach()
add_custom_command(
  OUTPUT ${VGT_CLASS_HEADERS}
  COMMAND ${Python3_EXECUTABLE} ${VGT_FACTS_GEN} headers ${VGT_FACTS_INCLUDE} ${VGT_CLASS_TABLES}
  DEPENDS ${VGT_FACTS_GEN} ${VGT_CLASS_TABLES}
  COMMENT "Generating method constants from trace-format/facts/classes/*.cls"
  VERBATIM)

set(VGT_FACTS_TABLE_C ${CMAKE_CURRENT_BINARY_DIR}/nv_facts_table.c)
add_custom_command(
  OUTPUT ${VGT_FACTS_TABLE_C} ${VGT_FACTS_INCLUDE}/vgt/nv_facts_gen.h
  COMMAND ${Python3_EXECUTABLE} ${VGT_FACTS_GEN} facts ${VGT_FACTS_TABLE_C} ${VGT_FACTS_INCLUDE}/vgt/nv_facts_gen.h
          ${VGT_FACTS_DIR}/families.txt ${VGT_FACTS_DIR}/addresses.txt ${VGT_CLASS_TABLES}
  DEPENDS ${VGT_FACTS_GEN} ${VGT_CLASS_TABLES} ${VGT_FACTS_DIR}/families.txt ${VGT_FACTS_DIR}/addresses.txt
  COMMENT "Generating class families and address operands from trace-format/facts/"
  VERBATIM)

add_custom_command(
  OUTPUT ${VGT_FACTS_INCLUDE}/vgt/nv_abi.h
  COMMAND ${Python3_EXECUTABLE} ${VGT_FACTS_DIR}/gen_abi.py ${VGT_FACTS_INCLUDE}/vgt/nv_abi.h ${VGT_FACTS_DIR}/rm_abi.txt
  DEPENDS ${VGT_FACTS_DIR}/gen_abi.py ${VGT_FACTS_DIR}/rm_abi.txt
  COMMENT "Generating the RM/UVM ABI from trace-format/facts/rm_abi.txt"
  VERBATIM)

# Every target that links vgt_format may include these headers: they are made before anything compiles.
add_custom_target(vgt_facts_gen DEPENDS ${VGT_CLASS_HEADERS} ${VGT_FACTS_TABLE_C}
                                        ${VGT_FACTS_INCLUDE}/vgt/nv_facts_gen.h ${VGT_FACTS_INCLUDE}/vgt/nv_abi.h)
