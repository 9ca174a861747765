# mlenv_embed(<target> ROOT <dir> SYMBOL <name> FILES <relative paths...>)
#
# Compiles the given files into a static library exposing
#   extern const mlenv::EmbeddedFile <name>[]; extern const std::size_t <name>_count;
# (see compiler/base/embedded.h). The bytes are regenerated whenever a file changes, so the
# binary never reads schema/ or stdlib/ from disk at run time.
set(MLENV_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_files.cmake)

function(mlenv_embed target)
  cmake_parse_arguments(ARG "" "ROOT;SYMBOL" "FILES" ${ARGN})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded.cc)
  set(deps)
  foreach(f ${ARG_FILES})
    list(APPEND deps ${ARG_ROOT}/${f})
  endforeach()
  string(REPLACE ";" "," files_arg "${ARG_FILES}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DROOT=${ARG_ROOT} -DSYMBOL=${ARG_SYMBOL} "-DFILES=${files_arg}"
            -DOUT=${out} -P ${MLENV_EMBED_SCRIPT}
    DEPENDS ${deps} ${MLENV_EMBED_SCRIPT}
    COMMENT "Embedding ${target}"
    VERBATIM)
  add_library(${target} STATIC ${out})
  target_link_libraries(${target} PUBLIC mlenv_base)
endfunction()
