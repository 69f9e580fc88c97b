# agent_boundary_add_plugin(<name> KIND backend|harness SOURCES <src>... [NO_INSTALL])
#
# Builds <kind>-<name>.so: a MODULE with hidden visibility whose only export is the plugin
# descriptor, linked with -z defs so a missing symbol fails the build, not the dlopen.
# Shipped unchanged to outside plugin authors through the AgentBoundary package.
function(agent_boundary_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_INSTALL" "KIND;OUTPUT_DIRECTORY" "SOURCES")
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_KIND MATCHES "^(backend|harness)$" OR NOT ARG_SOURCES)
    message(FATAL_ERROR "usage: agent_boundary_add_plugin(<name> KIND backend|harness SOURCES <src>... [NO_INSTALL] [OUTPUT_DIRECTORY <dir>])")
  endif()
  set(target ab_${ARG_KIND}_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE AgentBoundary::core)
  set_target_properties(${target} PROPERTIES
    PREFIX "" OUTPUT_NAME "${ARG_KIND}-${name}"
    CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  # Not in agent-boundary's own sanitizer build (AB_SANITIZE): there the sanitizers' symbols
  # come from the executable that loads the plugin.
  if(NOT AB_SANITIZE)
    target_link_options(${target} PRIVATE "LINKER:--no-undefined" "LINKER:-z,defs")
  endif()
  # Hidden visibility does not hide what libstdc++'s headers declare with default visibility
  # (typeinfo of std templates, STB_GNU_UNIQUE statics); a version script keeps the export
  # list to the descriptor alone.
  set(exports "${CMAKE_CURRENT_BINARY_DIR}/${target}.exports")
  file(CONFIGURE OUTPUT "${exports}" CONTENT "{\n  global: ab_plugin_entry_v1;\n  local: *;\n};\n")
  target_link_options(${target} PRIVATE "LINKER:--version-script=${exports}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${exports}")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  elseif(DEFINED AB_BUILD_PLUGIN_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${AB_BUILD_PLUGIN_DIR}")
  endif()
  if(NOT ARG_NO_INSTALL)
    if(DEFINED AB_PLUGIN_SUBDIR)
      set(dest "${AB_PLUGIN_SUBDIR}")
    else()
      set(dest "${AGENT_BOUNDARY_PLUGIN_DIR}")
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION "${dest}")
  endif()
endfunction()
