# Shared compile settings, applied per target with cnnstudio_target_defaults(target).
function(cnnstudio_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-unused-parameter>)
  # A shared library names every library it calls: a symbol left for the loader to find in
  # whatever else happens to be loaded is a dependency running the wrong way.
  get_target_property(type ${target} TYPE)
  # (Not in the fuzz build: clang links the sanitizer and libFuzzer runtimes into the executable
  # only, so the libraries' calls into them are resolved by the loader there.)
  if(type STREQUAL "SHARED_LIBRARY" AND NOT CNNSTUDIO_FUZZ)
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
endfunction()

# Sanitizer flags for every target of the build (call before adding any target).
#   CNNSTUDIO_SANITIZE=address,undefined   the ASan + UBSan test build (gcc): the first error
#                                          ends the process (-fno-sanitize-recover), so a
#                                          finding fails its test instead of scrolling past
#   CNNSTUDIO_FUZZ=ON                      the same sanitizers plus libFuzzer's coverage
#                                          instrumentation, for tests/fuzz (clang)
function(cnnstudio_apply_sanitizers)
  set(sanitizers "${CNNSTUDIO_SANITIZE}")
  if(CNNSTUDIO_FUZZ AND NOT sanitizers)
    set(sanitizers address,undefined)
  endif()
  if(NOT sanitizers)
    return()
  endif()
  set(compile_sanitizers ${sanitizers})
  if(CNNSTUDIO_FUZZ)
    set(compile_sanitizers fuzzer-no-link,${sanitizers})
  endif()
  add_compile_options(-fsanitize=${compile_sanitizers} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${sanitizers})
  message(STATUS "CNN Studio: sanitizers ${compile_sanitizers}")
endfunction()
