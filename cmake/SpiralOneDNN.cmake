# oneDNN for the float32 CPU convolutions (src/nn/conv_onednn.cpp) and LSTM layers
# (src/nn/rnn_onednn.cpp).
# SPIRALTORCH_ONEDNN=AUTO uses it when it is found, ON requires it, OFF never uses it.
# We look for a system install (Debian's libdnnl-dev), a prefix in CMAKE_PREFIX_PATH or
# DNNL_ROOT, or the CMake package config that dnnl_DIR names. Builds whose CPU runtime is
# SYCL/DPC++ (PyPI's onednn-devel) or a user threadpool are rejected: they need Intel's
# runtime or a threadpool we do not provide.
# Sets SPIRALTORCH_WITH_ONEDNN and SPIRALTORCH_ONEDNN_REASON (why it is absent).
set(SPIRALTORCH_ONEDNN "AUTO" CACHE STRING "Use oneDNN for float32 CPU convolutions (AUTO, ON, OFF)")
set_property(CACHE SPIRALTORCH_ONEDNN PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${SPIRALTORCH_ONEDNN}" _st_dnnl_mode)
set(SPIRALTORCH_WITH_ONEDNN OFF)
set(SPIRALTORCH_ONEDNN_REASON "")

if(_st_dnnl_mode STREQUAL "OFF")
  set(SPIRALTORCH_ONEDNN_REASON "oneDNN was disabled at build time (SPIRALTORCH_ONEDNN=OFF)")
else()
  # Headers and library by plain lookup (system dirs, CMAKE_PREFIX_PATH, DNNL_ROOT). The
  # CONFIG package only when the user points at one with dnnl_DIR: Debian's dnnl-config.cmake
  # does find_package(OpenCL REQUIRED), which would abort an AUTO configure on a machine
  # without the OpenCL headers instead of falling back.
  find_path(SPIRALTORCH_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp HINTS ${DNNL_ROOT} $ENV{DNNL_ROOT} PATH_SUFFIXES include)
  find_library(SPIRALTORCH_DNNL_LIBRARY NAMES dnnl HINTS ${DNNL_ROOT} $ENV{DNNL_ROOT} PATH_SUFFIXES lib lib64)
  if(dnnl_DIR AND (NOT SPIRALTORCH_DNNL_INCLUDE_DIR OR NOT SPIRALTORCH_DNNL_LIBRARY))
    find_package(dnnl CONFIG)
    if(TARGET DNNL::dnnl)
      get_target_property(_st_dnnl_inc DNNL::dnnl INTERFACE_INCLUDE_DIRECTORIES)
      list(GET _st_dnnl_inc 0 _st_dnnl_inc)
      set(SPIRALTORCH_DNNL_INCLUDE_DIR "${_st_dnnl_inc}" CACHE PATH "oneDNN headers" FORCE)
      set(SPIRALTORCH_DNNL_LIBRARY DNNL::dnnl CACHE STRING "oneDNN library" FORCE)
    endif()
  endif()

  set(_st_dnnl_runtime "")
  if(SPIRALTORCH_DNNL_INCLUDE_DIR AND EXISTS "${SPIRALTORCH_DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_config.h")
    file(STRINGS "${SPIRALTORCH_DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_config.h" _st_dnnl_rt_line
         REGEX "^#define DNNL_CPU_RUNTIME DNNL_RUNTIME_")
    string(REGEX REPLACE ".*DNNL_RUNTIME_([A-Z]+).*" "\\1" _st_dnnl_runtime "${_st_dnnl_rt_line}")
    file(STRINGS "${SPIRALTORCH_DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h" _st_dnnl_ver_lines
         REGEX "^#define DNNL_VERSION_(MAJOR|MINOR|PATCH) ")
    string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*PATCH ([0-9]+).*" "\\1.\\2.\\3"
           SPIRALTORCH_DNNL_VERSION "${_st_dnnl_ver_lines}")
  endif()

  if(NOT SPIRALTORCH_DNNL_INCLUDE_DIR OR NOT SPIRALTORCH_DNNL_LIBRARY)
    set(SPIRALTORCH_ONEDNN_REASON
        "oneDNN was not found when this build was configured (install libdnnl-dev, or set DNNL_ROOT or dnnl_DIR)")
  elseif(NOT _st_dnnl_runtime MATCHES "^(OMP|SEQ|TBB)$")
    set(SPIRALTORCH_ONEDNN_REASON
        "the oneDNN in ${SPIRALTORCH_DNNL_INCLUDE_DIR} has CPU runtime '${_st_dnnl_runtime}' (need OMP, SEQ or TBB)")
  else()
    set(SPIRALTORCH_WITH_ONEDNN ON)
  endif()

  if(NOT SPIRALTORCH_WITH_ONEDNN AND _st_dnnl_mode STREQUAL "ON")
    message(FATAL_ERROR "SPIRALTORCH_ONEDNN=ON but ${SPIRALTORCH_ONEDNN_REASON}")
  endif()
endif()

if(SPIRALTORCH_WITH_ONEDNN)
  message(STATUS "SpiralTorch: oneDNN ${SPIRALTORCH_DNNL_VERSION} ON (${SPIRALTORCH_DNNL_LIBRARY}, "
                 "CPU runtime ${_st_dnnl_runtime})")
else()
  message(STATUS "SpiralTorch: oneDNN OFF: ${SPIRALTORCH_ONEDNN_REASON}")
endif()

# Only src/nn/conv_onednn.cpp and src/nn/rnn_onednn.cpp see the oneDNN headers and the
# define, so switching oneDNN on or off recompiles those two files, and nothing built against the library
# (the Python module, the tests) depends on oneDNN's headers.
function(spiraltorch_configure_onednn target)
  set(_src "${CMAKE_CURRENT_SOURCE_DIR}/src/nn/conv_onednn.cpp" "${CMAKE_CURRENT_SOURCE_DIR}/src/nn/rnn_onednn.cpp")
  if(SPIRALTORCH_WITH_ONEDNN)
    set_source_files_properties(${_src} TARGET_DIRECTORY ${target} PROPERTIES
      COMPILE_DEFINITIONS "SPIRALTORCH_WITH_ONEDNN=1")
    # A -I for the compiler's own /usr/include would reorder the system headers.
    if(NOT SPIRALTORCH_DNNL_INCLUDE_DIR IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
      set_source_files_properties(${_src} TARGET_DIRECTORY ${target} PROPERTIES
        INCLUDE_DIRECTORIES "${SPIRALTORCH_DNNL_INCLUDE_DIR}")
    endif()
    target_link_libraries(${target} PRIVATE "${SPIRALTORCH_DNNL_LIBRARY}")
  else()
    set_source_files_properties(${_src} TARGET_DIRECTORY ${target} PROPERTIES
      COMPILE_DEFINITIONS "SPIRALTORCH_ONEDNN_REASON=\"${SPIRALTORCH_ONEDNN_REASON}\"")
  endif()
endfunction()
