# Intel oneMKL for the float32/float64 CPU GEMMs on Intel CPUs (src/backend/cpu/mkl_runtime.cpp).
# SPIRALTORCH_MKL_STATIC=AUTO links MKL's GEMMs into the library when the static archives are
# found, ON requires them, OFF never links them. Only the referenced GEMM paths are linked (about
# 22 MB, against about 720 MB for PyPI's runtime `mkl` wheel), with every MKL symbol hidden, so
# `pip install .` gets MKL's GEMM without a runtime dependency. Where they come from, first match wins:
#   1. MKLROOT (a oneAPI install: lib/ or lib/intel64 holding libmkl_core.a);
#   2. PyPI's mkl-static in the Python environment running the build (a build requirement of
#      pyproject.toml on Linux x86-64), found through the wheel's file records.
# Without them the library still loads libmkl_rt at run time when `pip install mkl` put one in the
# environment (the lib/ of the environment this build sees is one place it looks).
# Sets SPIRALTORCH_WITH_MKL_STATIC, SPIRALTORCH_MKL_STATIC_REASON and SPIRALTORCH_MKL_STATIC_VERSION.
set(SPIRALTORCH_MKL_STATIC "AUTO" CACHE STRING "Link Intel MKL's GEMMs statically (AUTO, ON, OFF)")
set_property(CACHE SPIRALTORCH_MKL_STATIC PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${SPIRALTORCH_MKL_STATIC}" _st_mkl_mode)
set(SPIRALTORCH_WITH_MKL_STATIC OFF)
set(SPIRALTORCH_MKL_STATIC_REASON "")
set(_st_mkl_archives libmkl_intel_lp64.a libmkl_gnu_thread.a libmkl_core.a)

find_package(Python 3.9 COMPONENTS Interpreter)
if(_st_mkl_mode STREQUAL "OFF")
  set(SPIRALTORCH_MKL_STATIC_REASON "disabled at build time (SPIRALTORCH_MKL_STATIC=OFF)")
elseif(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" OR NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(SPIRALTORCH_MKL_STATIC_REASON "MKL is linked on Linux x86-64 only")
else()
  set(_st_mkl_libdir "")
  set(_st_mkl_root "${MKLROOT}")
  if(NOT _st_mkl_root AND DEFINED ENV{MKLROOT})
    set(_st_mkl_root "$ENV{MKLROOT}")
  endif()
  if(_st_mkl_root)
    foreach(_d lib/intel64 lib)
      if(EXISTS "${_st_mkl_root}/${_d}/libmkl_core.a")
        set(_st_mkl_libdir "${_st_mkl_root}/${_d}")
        break()
      endif()
    endforeach()
  elseif(Python_Interpreter_FOUND)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c [=[
import importlib.metadata as md, os, re
d = md.distribution("mkl-static")
hits = sorted(os.path.realpath(d.locate_file(f)) for f in d.files or [] if re.search(r"(^|/)libmkl_core\.a$", f.as_posix()))
print(os.path.dirname(hits[0]))
print(d.version)
]=]
      OUTPUT_VARIABLE _st_mkl_out RESULT_VARIABLE _st_mkl_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_st_mkl_rc EQUAL 0)
      string(REPLACE "\n" ";" _st_mkl_out "${_st_mkl_out}")
      list(GET _st_mkl_out 0 _st_mkl_libdir)
      list(GET _st_mkl_out 1 SPIRALTORCH_MKL_STATIC_VERSION)
    endif()
  endif()
  set(SPIRALTORCH_MKL_STATIC_LIBRARIES "")
  foreach(_a ${_st_mkl_archives})
    if(_st_mkl_libdir AND EXISTS "${_st_mkl_libdir}/${_a}")
      list(APPEND SPIRALTORCH_MKL_STATIC_LIBRARIES "${_st_mkl_libdir}/${_a}")
    endif()
  endforeach()
  list(LENGTH SPIRALTORCH_MKL_STATIC_LIBRARIES _st_mkl_found)
  if(_st_mkl_found EQUAL 3)
    set(SPIRALTORCH_WITH_MKL_STATIC ON)
  else()
    set(SPIRALTORCH_MKL_STATIC_REASON
        "MKL's static archives were not found when this build was configured (pip install mkl-static, or set MKLROOT)")
  endif()
endif()

if(NOT SPIRALTORCH_WITH_MKL_STATIC AND _st_mkl_mode STREQUAL "ON")
  message(FATAL_ERROR "SPIRALTORCH_MKL_STATIC=ON but ${SPIRALTORCH_MKL_STATIC_REASON}")
endif()
if(SPIRALTORCH_WITH_MKL_STATIC)
  message(STATUS "SpiralTorch: MKL GEMMs linked statically (${_st_mkl_libdir})")
else()
  message(STATUS "SpiralTorch: MKL not linked: ${SPIRALTORCH_MKL_STATIC_REASON}; libmkl_rt is still loaded at run time when present")
endif()

function(spiraltorch_configure_mkl target)
  set(_src "${CMAKE_CURRENT_SOURCE_DIR}/src/backend/cpu/mkl_runtime.cpp")
  set(_defs "")
  if(Python_Interpreter_FOUND)
    execute_process(COMMAND "${Python_EXECUTABLE}" -c "import os, sys; print(os.path.join(sys.prefix, 'lib'))"
      OUTPUT_VARIABLE _dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    list(APPEND _defs "SPIRALTORCH_MKL_LIBRARY_DIR_HINT=\"${_dir}\"")
  endif()
  if(SPIRALTORCH_WITH_MKL_STATIC)
    list(APPEND _defs "SPIRALTORCH_MKL_STATIC=1")
    # The archives reference each other both ways (a link group), and --exclude-libs keeps their
    # symbols out of every shared object built from this library: a process that also holds
    # PyTorch's MKL or libmkl_rt sees no clash.
    target_link_libraries(${target} PRIVATE "$<LINK_GROUP:RESCAN,${SPIRALTORCH_MKL_STATIC_LIBRARIES}>")
    list(JOIN _st_mkl_archives ":" _names)
    target_link_options(${target} INTERFACE "LINKER:--exclude-libs,${_names}")
  else()
    list(APPEND _defs "SPIRALTORCH_MKL_STATIC_REASON=\"${SPIRALTORCH_MKL_STATIC_REASON}\"")
  endif()
  set_property(SOURCE ${_src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_DEFINITIONS ${_defs})
endfunction()
