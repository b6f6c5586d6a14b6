# Fails when a lower layer includes a higher one. Run as
#   cmake -DROOT=<source tree> -P cmake/CheckIncludeDirection.cmake
# The layers, lowest first (docs/architecture.md draws them):
#   core                       the Backend interface, Tensor, op checks, Error, the spec document
#   backends (kernels/)        cpu-ref, cpu, cuda, cudnn: implement the Backend interface
#   engine, datasets           network, layers, trainer; data sets and the batch pipeline
#   registry (kernels/registry) names every backend, discovers the hardware
#   interchange                models in and out in other formats (ONNX): engine + libonnx
#   live                       the live emotion-recognition pipeline: engine + datasets + OpenCV
#   ui                         the Qt widgets
#   app, bench                 the executables
# Each folder may include its own headers and those of the layers listed for it below; tests/
# may include anything. An include is attributed to the module whose folder holds the header.
cmake_minimum_required(VERSION 3.25)
if(ROOT)
  get_filename_component(ROOT "${ROOT}" ABSOLUTE)
else()
  message(FATAL_ERROR "usage: cmake -DROOT=<source tree> -P CheckIncludeDirection.cmake")
endif()

# Module name, its folder, and the modules it may include (besides itself). The more specific
# folder (kernels/registry) comes before the one that contains it (kernels).
set(modules core registry backends engine datasets interchange live ui app bench)
set(folder_core core)
set(folder_registry kernels/registry)
set(folder_backends kernels)
set(folder_engine engine)
set(folder_datasets datasets)
set(folder_interchange interchange)
set(folder_live live)
set(folder_ui ui)
set(folder_app app)
set(folder_bench bench)
set(allowed_core "")
set(allowed_backends core)
set(allowed_engine core)
set(allowed_datasets core)
set(allowed_interchange core engine)
set(allowed_registry core backends)
set(allowed_live core engine datasets)
set(allowed_ui core engine datasets registry live)
set(allowed_app core engine datasets registry interchange live ui)
set(allowed_bench core engine datasets registry backends)

# The module a path (relative to ROOT) belongs to; empty outside every module.
function(module_of path out)
  foreach(module IN LISTS modules)
    string(LENGTH "${folder_${module}}/" prefix_length)
    string(SUBSTRING "${path}" 0 ${prefix_length} prefix)
    if(prefix STREQUAL "${folder_${module}}/")
      set(${out} ${module} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

# Where an #include "..." of `file` lands: beside the file, in a module's public include
# folder, or in the including module's own folder (its private include root). Empty: a system
# or third-party header.
function(resolve_include file header out)
  get_filename_component(directory "${ROOT}/${file}" DIRECTORY)
  module_of("${file}" own_module)
  set(candidates "${directory}/${header}")
  foreach(module IN LISTS modules)
    list(APPEND candidates "${ROOT}/${folder_${module}}/include/${header}")
  endforeach()
  list(APPEND candidates "${ROOT}/${folder_${own_module}}/src/${header}"
                        "${ROOT}/${folder_${own_module}}/${header}")
  foreach(candidate IN LISTS candidates)
    if(EXISTS "${candidate}" AND NOT IS_DIRECTORY "${candidate}")
      file(RELATIVE_PATH relative "${ROOT}" "${candidate}")
      set(${out} "${relative}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

set(violations 0)
set(checked 0)
foreach(module IN LISTS modules)
  file(GLOB_RECURSE sources RELATIVE "${ROOT}"
       "${ROOT}/${folder_${module}}/*.h" "${ROOT}/${folder_${module}}/*.cpp"
       "${ROOT}/${folder_${module}}/*.cu" "${ROOT}/${folder_${module}}/*.cuh")
  foreach(file IN LISTS sources)
    module_of("${file}" file_module)
    if(NOT file_module STREQUAL module)
      continue()  # a nested module's file (kernels/registry seen from kernels)
    endif()
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${ROOT}/${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" header "${line}")
      resolve_include("${file}" "${header}" target)
      if(NOT target)
        continue()
      endif()
      module_of("${target}" target_module)
      if(NOT target_module OR target_module STREQUAL module)
        continue()
      endif()
      if(NOT target_module IN_LIST allowed_${module})
        message(SEND_ERROR "${file}: includes \"${header}\" (${target}): ${module} may not "
                           "include ${target_module}, a layer above it or beside it")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "${violations} include(s) run against the layers (docs/architecture.md)")
endif()
message(STATUS "include direction: ${checked} files checked, every include points down")
