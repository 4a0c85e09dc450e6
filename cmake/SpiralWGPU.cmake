# The wgpu backend (src/backend/wgpu/): WebGPU through wgpu-native's C API. The headers
# (webgpu.h, wgpu.h) come from PyPI's `wgpu` wheel (wgpu/resources/), like OpenBLAS from
# scipy-openblas32; WGPU_ROOT (a folder holding webgpu.h) overrides. The library
# (libwgpu_native-release.so) is loaded at run time with dlopen from the same wheel next to
# the installed module, so a machine without it imports fine and reports why wgpu is
# unavailable. SPIRALTORCH_WGPU=AUTO builds the backend when the headers are found, ON
# requires them, OFF builds src/backend/wgpu/wgpu_stub.cpp instead.
set(SPIRALTORCH_WGPU "AUTO" CACHE STRING "Build the wgpu backend (AUTO, ON, OFF)")
set_property(CACHE SPIRALTORCH_WGPU PROPERTY STRINGS AUTO ON OFF)
set(SPIRALTORCH_WITH_WGPU OFF)
set(SPIRALTORCH_WGPU_REASON "")
string(TOUPPER "${SPIRALTORCH_WGPU}" _st_wgpu_mode)
if(_st_wgpu_mode STREQUAL "OFF")
  set(SPIRALTORCH_WGPU_REASON "the wgpu backend was disabled at build time (SPIRALTORCH_WGPU=OFF)")
else()
  set(_st_wgpu_hints "")
  foreach(_root IN ITEMS "${WGPU_ROOT}" "$ENV{WGPU_ROOT}")
    if(_root)
      list(APPEND _st_wgpu_hints "${_root}")
    endif()
  endforeach()
  set(_st_wgpu_python "${Python_EXECUTABLE}")
  if(NOT _st_wgpu_python)
    find_program(_st_wgpu_python NAMES python3 python)
  endif()
  if(_st_wgpu_python)
    # importlib.util.find_spec locates the wheel without importing it (its cffi/rendercanvas
    # dependencies are not needed: we only read files from it).
    execute_process(COMMAND "${_st_wgpu_python}" -c
      "import importlib.util as u, os; s = u.find_spec('wgpu'); print(os.path.join(list(s.submodule_search_locations)[0], 'resources'))"
      OUTPUT_VARIABLE _st_wgpu_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_st_wgpu_wheel)
      list(APPEND _st_wgpu_hints "${_st_wgpu_wheel}")
    endif()
  endif()
  find_path(SPIRALTORCH_WGPU_INCLUDE_DIR NAMES webgpu.h HINTS ${_st_wgpu_hints} NO_DEFAULT_PATH)
  if(SPIRALTORCH_WGPU_INCLUDE_DIR AND EXISTS "${SPIRALTORCH_WGPU_INCLUDE_DIR}/wgpu.h")
    set(SPIRALTORCH_WITH_WGPU ON)
    set(SPIRALTORCH_WGPU_LIBRARY_HINT "${SPIRALTORCH_WGPU_INCLUDE_DIR}/libwgpu_native-release.so")
    message(STATUS "SpiralTorch: wgpu backend ON (headers ${SPIRALTORCH_WGPU_INCLUDE_DIR})")
  elseif(_st_wgpu_mode STREQUAL "ON")
    message(FATAL_ERROR "SPIRALTORCH_WGPU=ON but webgpu.h/wgpu.h were not found (pip install wgpu==0.32.0, or set WGPU_ROOT)")
  else()
    set(SPIRALTORCH_WGPU_REASON "the webgpu.h headers (PyPI's wgpu wheel) were not found when this build was configured")
    message(STATUS "SpiralTorch: wgpu backend OFF: ${SPIRALTORCH_WGPU_REASON}")
  endif()
endif()

file(GLOB _st_wgpu_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/backend/wgpu/*.cpp)
list(FILTER SPIRALTORCH_SOURCES EXCLUDE REGEX "src/backend/wgpu/")
if(SPIRALTORCH_WITH_WGPU)
  list(FILTER _st_wgpu_sources EXCLUDE REGEX "wgpu_stub\\.cpp$")
  list(APPEND SPIRALTORCH_SOURCES ${_st_wgpu_sources})
  # The WGSL kernels, embedded at build time: one generated .cpp holding each file's text.
  file(GLOB SPIRALTORCH_WGSL CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/backend/wgpu/kernels/*.wgsl)
  set(_st_wgsl_cpp ${CMAKE_CURRENT_BINARY_DIR}/wgsl_sources.cpp)
  add_custom_command(OUTPUT ${_st_wgsl_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${_st_wgsl_cpp} -DDIR=${CMAKE_CURRENT_SOURCE_DIR}/src/backend/wgpu/kernels -P
      ${CMAKE_CURRENT_SOURCE_DIR}/cmake/EmbedWGSL.cmake
    DEPENDS ${SPIRALTORCH_WGSL} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/EmbedWGSL.cmake
    COMMENT "Embedding WGSL kernels")
  list(APPEND SPIRALTORCH_SOURCES ${_st_wgsl_cpp})
else()
  list(APPEND SPIRALTORCH_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/src/backend/wgpu/wgpu_stub.cpp)
endif()

# Only the wgpu sources see the headers and the defines: the rest of the library compiles with
# the same flags whether or not wgpu is built (so ccache serves them across configurations).
function(spiraltorch_configure_wgpu target)
  if(SPIRALTORCH_WITH_WGPU)
    set(_srcs ${_st_wgpu_sources})
    set_property(SOURCE ${_srcs} APPEND PROPERTY INCLUDE_DIRECTORIES ${SPIRALTORCH_WGPU_INCLUDE_DIR})
    set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/src/backend/wgpu/api.cpp APPEND PROPERTY COMPILE_DEFINITIONS
      "SPIRALTORCH_WGPU_LIBRARY_HINT=\"${SPIRALTORCH_WGPU_LIBRARY_HINT}\"")
    target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS})
  else()
    set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/src/backend/wgpu/wgpu_stub.cpp APPEND PROPERTY COMPILE_DEFINITIONS
      "SPIRALTORCH_WGPU_REASON=\"${SPIRALTORCH_WGPU_REASON}\"")
  endif()
endfunction()
