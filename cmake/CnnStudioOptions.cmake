# Shared compile settings, applied per target with cnnstudio_target_defaults(target).
function(cnnstudio_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-unused-parameter>)
  # A shared library names every library it calls: a symbol left for the loader to find in
  # whatever else happens to be loaded is a dependency running the wrong way.
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "SHARED_LIBRARY")
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
endfunction()
