# The vectorised CPU kernels, compiled once per CPU capability and chosen at run time
# (src/backend/cpu/dispatch.h has the design). Shipped binaries are portable: nothing is built
# with -march=native; the library is compiled for x86-64-v2, and these kernel sources also for
# x86-64-v3 ("avx2") and x86-64-v4 ("avx512").
#
# Each capability's objects are partially linked (ld -r, COMDAT groups dissolved) into one object
# whose symbols are then all made local except its table: the inline functions and templates it
# instantiates (Tensor accessors, std::vector, vmath.h, ...) stay private copies, so the linker can
# never pick an AVX-512 copy of one for the baseline code that calls it.
#
# SPIRALTORCH_CPU_DISPATCH=OFF (or a non-x86-64 target, or a toolchain without objcopy/nm)
# compiles the kernels once, as "baseline", for the target the compiler defaults to.
#
# Sets SPIRALTORCH_CPU_CAPABILITIES (the capabilities built) and removes the kernel sources from
# SPIRALTORCH_SOURCES; spiraltorch_configure_cpu_kernels(target) builds them with the target's settings and
# lists their objects in SPIRALTORCH_CPU_KERNEL_OBJECTS for the targets that link the library's objects.
option(SPIRALTORCH_CPU_DISPATCH "Compile the vectorised CPU kernels per capability (x86-64: baseline, AVX2, AVX-512)" ON)

set(SPIRALTORCH_CPU_KERNEL_SOURCES
  src/backend/cpu/binary.cpp src/backend/cpu/binary_bf16.cpp src/backend/cpu/binary_f16.cpp
  src/backend/cpu/unary.cpp src/backend/cpu/unary_bf16.cpp src/backend/cpu/unary_f16.cpp
  src/backend/cpu/copy.cpp src/backend/cpu/reduce.cpp
  src/backend/cpu/softmax.cpp src/backend/cpu/layer_norm.cpp src/backend/cpu/batch_norm.cpp
  src/backend/cpu/attention.cpp src/backend/cpu/optim.cpp src/backend/cpu/rnn.cpp src/backend/cpu/loss_rows.cpp
  src/backend/cpu/kernel_table.cpp)
foreach(_st_src IN LISTS SPIRALTORCH_CPU_KERNEL_SOURCES)
  list(REMOVE_ITEM SPIRALTORCH_SOURCES "${CMAKE_CURRENT_SOURCE_DIR}/${_st_src}")
endforeach()

# The float32 vector math (vmath.h) is written branch-free, but with the default -ftrapping-math
# GCC refuses to if-convert its clamps, so the exp/tanh/gelu loops stayed scalar. The library never
# inspects floating-point exception flags.
# On AVX-512 CPUs GCC's tuning keeps loops at 256 bits; the vector-math loops are compute-bound,
# and at 512 bits exp ran 1.4x faster on an Intel Xeon (a no-op without 512-bit vectors).
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-mprefer-vector-width=512 SPIRALTORCH_HAS_PREFER_512)
set_property(SOURCE ${SPIRALTORCH_CPU_KERNEL_SOURCES} APPEND PROPERTY COMPILE_OPTIONS -fno-trapping-math)
if(SPIRALTORCH_HAS_PREFER_512)
  set_property(SOURCE src/backend/cpu/unary.cpp src/backend/cpu/unary_bf16.cpp src/backend/cpu/unary_f16.cpp
    src/backend/cpu/binary.cpp src/backend/cpu/binary_bf16.cpp src/backend/cpu/binary_f16.cpp src/backend/cpu/softmax.cpp
    src/backend/cpu/attention.cpp src/backend/cpu/optim.cpp src/backend/cpu/loss_rows.cpp
    APPEND PROPERTY COMPILE_OPTIONS -mprefer-vector-width=512)
endif()

set(_st_cpu_x86 OFF)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|x64)$" AND CMAKE_SIZEOF_VOID_P EQUAL 8)
  set(_st_cpu_x86 ON)
endif()
set(_st_cpu_multi OFF)
set(SPIRALTORCH_CPU_BASELINE_FLAGS "")
if(_st_cpu_x86)
  check_cxx_compiler_flag(-march=x86-64-v4 SPIRALTORCH_HAS_MARCH_LEVELS)
  if(NOT SPIRALTORCH_HAS_MARCH_LEVELS)
    message(FATAL_ERROR "SpiralTorch: the C++ compiler does not know -march=x86-64-v2/v3/v4 (GCC >= 11 or Clang >= 12 does)")
  endif()
  set(SPIRALTORCH_CPU_BASELINE_FLAGS -march=x86-64-v2)
  if(SPIRALTORCH_CPU_DISPATCH AND CMAKE_OBJCOPY AND CMAKE_NM AND NOT APPLE AND NOT WIN32)
    set(_st_cpu_multi ON)
  elseif(SPIRALTORCH_CPU_DISPATCH)
    message(STATUS "SpiralTorch: CPU kernels for the baseline only (no objcopy/nm to build per-capability objects)")
  endif()
endif()

if(_st_cpu_multi)
  set(SPIRALTORCH_CPU_CAPABILITIES baseline avx2 avx512)
else()
  set(SPIRALTORCH_CPU_CAPABILITIES baseline)
endif()
message(STATUS "SpiralTorch: CPU kernel capabilities: ${SPIRALTORCH_CPU_CAPABILITIES}")

function(spiraltorch_configure_cpu_kernels target)
  set(_objects "")
  # The library itself: the baseline (nothing of it needs more; its hot loops are the kernels).
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${SPIRALTORCH_CPU_BASELINE_FLAGS}>)
  set(_flags_baseline ${SPIRALTORCH_CPU_BASELINE_FLAGS})
  set(_flags_avx2 -march=x86-64-v3)
  set(_flags_avx512 -march=x86-64-v4)
  foreach(cap IN LISTS SPIRALTORCH_CPU_CAPABILITIES)
    string(TOUPPER "${cap}" _cap_upper)
    set(lib spiral_cpu_${cap})
    add_library(${lib} OBJECT ${SPIRALTORCH_CPU_KERNEL_SOURCES})
    # The library's own settings (definitions that shape its headers, warnings, sanitizers), then
    # the capability's -march (the last -march wins).
    target_compile_definitions(${lib} PRIVATE $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS> CPU_CAPABILITY=${cap})
    if(cap STREQUAL "baseline")
      target_compile_definitions(${lib} PRIVATE ST_CPU_BASELINE_OBJECT=1)  # src/backend/cpu/baseline_only.h
    endif()
    target_compile_options(${lib} PRIVATE $<TARGET_PROPERTY:${target},COMPILE_OPTIONS> ${_flags_${cap}})
    target_include_directories(${lib} PRIVATE $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
    target_link_libraries(${lib} PRIVATE OpenMP::OpenMP_CXX)
    set_property(SOURCE src/backend/cpu/dispatch.cpp APPEND PROPERTY COMPILE_DEFINITIONS
      SPIRALTORCH_CPU_HAS_${_cap_upper}=1)
    if(_st_cpu_multi)
      set(_obj "${CMAKE_CURRENT_BINARY_DIR}/spiral_cpu_kernels_${cap}.o")
      add_custom_command(OUTPUT "${_obj}"
        COMMAND "${CMAKE_CXX_COMPILER}" -r -nostdlib -Wl,--force-group-allocation -o "${_obj}.partial"
          "$<TARGET_OBJECTS:${lib}>"
        COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DOBJECT=${_obj}.partial" "-DCAPABILITY=${cap}"
          -P "${CMAKE_CURRENT_SOURCE_DIR}/cmake/SpiralCheckCpuKernels.cmake"
        COMMAND "${CMAKE_OBJCOPY}" -G spiraltorch_cpu_kernels_${cap} "${_obj}.partial" "${_obj}"
        DEPENDS ${lib} "$<TARGET_OBJECTS:${lib}>" "${CMAKE_CURRENT_SOURCE_DIR}/cmake/SpiralCheckCpuKernels.cmake"
        COMMAND_EXPAND_LISTS VERBATIM
        COMMENT "CPU kernels (${cap}): one object, only its table global")
      set_source_files_properties("${_obj}" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
      list(APPEND _objects "${_obj}")
    else()
      list(APPEND _objects $<TARGET_OBJECTS:${lib}>)
    endif()
  endforeach()
  # Not target_sources(${target}): an object library's TARGET_OBJECTS leave out objects it did not compile.
  set(SPIRALTORCH_CPU_KERNEL_OBJECTS ${_objects} PARENT_SCOPE)
endfunction()
