# oneDNN for the float32 CPU convolutions (src/backend/cpu/conv_onednn.cpp) and LSTM layers
# (src/backend/cpu/rnn_onednn.cpp).
# SPIRALTORCH_ONEDNN=AUTO uses it when it is found, ON requires it, OFF never uses it.
# Where it comes from, first match wins:
#   1. a prefix the user names (DNNL_ROOT, or the CMake package config that dnnl_DIR names);
#   2. PyPI's onednn-devel-cpu-gomp in the Python environment running the build (a build
#      requirement of pyproject.toml, so `pip install .` gets it), with its runtime library
#      from onednn-cpu-gomp; the installed module finds that library by a relative rpath;
#   3. a system install (Debian's libdnnl-dev) or a prefix in CMAKE_PREFIX_PATH.
# So with both the wheel and libdnnl-dev present the wheel wins; -DDNNL_ROOT=/usr picks
# Debian's. Builds whose CPU runtime is SYCL/DPC++ or a user threadpool are rejected: they
# need Intel's runtime or a threadpool we do not provide.
# Sets SPIRALTORCH_WITH_ONEDNN, SPIRALTORCH_ONEDNN_REASON (why it is absent) and
# SPIRALTORCH_DNNL_INSTALL_RPATH (what the installed module adds to its rpath).
set(SPIRALTORCH_ONEDNN "AUTO" CACHE STRING "Use oneDNN for float32 CPU convolutions (AUTO, ON, OFF)")
set_property(CACHE SPIRALTORCH_ONEDNN PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${SPIRALTORCH_ONEDNN}" _st_dnnl_mode)
set(SPIRALTORCH_WITH_ONEDNN OFF)
set(SPIRALTORCH_ONEDNN_REASON "")

if(_st_dnnl_mode STREQUAL "OFF")
  set(SPIRALTORCH_ONEDNN_REASON "oneDNN was disabled at build time (SPIRALTORCH_ONEDNN=OFF)")
else()
  # PyPI's wheels put their files under the environment's data prefix (include/, lib/), not
  # in a package, and pip's isolated build environment is a temporary prefix of its own:
  # ask the wheels' file records where they are.
  set(_st_dnnl_pypi OFF)
  if(NOT DNNL_ROOT AND NOT DEFINED ENV{DNNL_ROOT} AND NOT dnnl_DIR)
    find_package(Python 3.9 COMPONENTS Interpreter)
    if(Python_Interpreter_FOUND)
      execute_process(
        COMMAND "${Python_EXECUTABLE}" -c [=[
import importlib.metadata as md, os, re
def where(dist, pattern):
    d = md.distribution(dist)
    hits = [os.path.realpath(d.locate_file(f)) for f in d.files or [] if re.search(pattern, f.as_posix())]
    return sorted(hits)[0]
print(os.path.dirname(os.path.dirname(os.path.dirname(where("onednn-devel-cpu-gomp", r"include/oneapi/dnnl/dnnl\.hpp$")))))
print(where("onednn-cpu-gomp", r"(^|/)libdnnl\.so\.[0-9]+$"))
]=]
        OUTPUT_VARIABLE _st_dnnl_out RESULT_VARIABLE _st_dnnl_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_st_dnnl_rc EQUAL 0)
        string(REPLACE "\n" ";" _st_dnnl_out "${_st_dnnl_out}")
        list(GET _st_dnnl_out 0 SPIRALTORCH_DNNL_INCLUDE_DIR)
        list(GET _st_dnnl_out 1 SPIRALTORCH_DNNL_LIBRARY)
        set(_st_dnnl_pypi ON)
      endif()
    endif()
  endif()

  # Headers and library by plain lookup (system dirs, CMAKE_PREFIX_PATH, DNNL_ROOT). The
  # CONFIG package only when the user points at one with dnnl_DIR: Debian's dnnl-config.cmake
  # does find_package(OpenCL REQUIRED), which would abort an AUTO configure on a machine
  # without the OpenCL headers instead of falling back.
  # (Plain variables from the PyPI lookup shadow these cache entries for this configure.)
  if(NOT _st_dnnl_pypi)
    find_path(SPIRALTORCH_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp HINTS ${DNNL_ROOT} $ENV{DNNL_ROOT} PATH_SUFFIXES include)
    find_library(SPIRALTORCH_DNNL_LIBRARY NAMES dnnl HINTS ${DNNL_ROOT} $ENV{DNNL_ROOT} PATH_SUFFIXES lib lib64)
  endif()
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
        "oneDNN was not found when this build was configured (pip install onednn-devel-cpu-gomp, install libdnnl-dev, or set DNNL_ROOT or dnnl_DIR)")
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

set(SPIRALTORCH_DNNL_INSTALL_RPATH "")
if(SPIRALTORCH_WITH_ONEDNN AND _st_dnnl_pypi)
  # onednn-cpu-gomp installs lib/libdnnl.so.3 under the same prefix as the site-packages
  # holding spiraltorch/ (<prefix>/lib/pythonX.Y/site-packages/spiraltorch), in a venv,
  # a --user install and a system prefix alike.
  set(SPIRALTORCH_DNNL_INSTALL_RPATH "$ORIGIN/../../../../lib")
  get_filename_component(_st_dnnl_libdir "${SPIRALTORCH_DNNL_LIBRARY}" DIRECTORY)
  list(APPEND CMAKE_BUILD_RPATH "${_st_dnnl_libdir}")
endif()

if(SPIRALTORCH_WITH_ONEDNN)
  if(_st_dnnl_pypi)
    set(_st_dnnl_from "PyPI's onednn-cpu-gomp")
  else()
    set(_st_dnnl_from "${SPIRALTORCH_DNNL_LIBRARY}")
  endif()
  message(STATUS "SpiralTorch: oneDNN ${SPIRALTORCH_DNNL_VERSION} ON (${_st_dnnl_from}: ${SPIRALTORCH_DNNL_LIBRARY}, "
                 "CPU runtime ${_st_dnnl_runtime})")
else()
  message(STATUS "SpiralTorch: oneDNN OFF: ${SPIRALTORCH_ONEDNN_REASON}")
endif()

# Only src/backend/cpu/conv_onednn.cpp, rnn_onednn.cpp and matmul_onednn.cpp see the oneDNN headers and the
# define, so switching oneDNN on or off recompiles those files, and nothing built against the library
# (the Python module, the tests) depends on oneDNN's headers.
function(spiraltorch_configure_onednn target)
  set(_src "${CMAKE_CURRENT_SOURCE_DIR}/src/backend/cpu/conv_onednn.cpp" "${CMAKE_CURRENT_SOURCE_DIR}/src/backend/cpu/rnn_onednn.cpp"
           "${CMAKE_CURRENT_SOURCE_DIR}/src/backend/cpu/matmul_onednn.cpp")
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
