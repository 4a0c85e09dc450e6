# OpenBLAS comes from the scipy-openblas32 wheel (symbols prefixed scipy_), so a
# pip build needs nothing from the system. SPIRALTORCH_BLAS_DIR overrides the lookup.
if(NOT SPIRALTORCH_BLAS_DIR OR NOT SPIRALTORCH_BLAS_INCLUDE)
  find_package(Python 3.9 COMPONENTS Interpreter REQUIRED)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c "import scipy_openblas32 as s; print(s.get_include_dir()); print(s.get_lib_dir())"
    OUTPUT_VARIABLE _blas_out OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _blas_rc)
  if(NOT _blas_rc EQUAL 0)
    message(FATAL_ERROR "scipy-openblas32 not found: pip install scipy-openblas32")
  endif()
  string(REPLACE "\n" ";" _blas_lines "${_blas_out}")
  list(GET _blas_lines 0 SPIRALTORCH_BLAS_INCLUDE)
  list(GET _blas_lines 1 SPIRALTORCH_BLAS_DIR)
endif()
add_library(spiral_blas SHARED IMPORTED)
set_target_properties(spiral_blas PROPERTIES
  IMPORTED_LOCATION "${SPIRALTORCH_BLAS_DIR}/libscipy_openblas.so"
  INTERFACE_INCLUDE_DIRECTORIES "${SPIRALTORCH_BLAS_INCLUDE}")
set(SPIRALTORCH_BLAS_DIR "${SPIRALTORCH_BLAS_DIR}" CACHE PATH "directory holding libscipy_openblas.so")
set(SPIRALTORCH_BLAS_INCLUDE "${SPIRALTORCH_BLAS_INCLUDE}" CACHE PATH "directory holding cblas.h")
set(CMAKE_BUILD_RPATH "${SPIRALTORCH_BLAS_DIR}")
