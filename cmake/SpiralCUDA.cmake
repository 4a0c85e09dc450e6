# The CUDA backend (src/backend/cuda/*.cu). SPIRALTORCH_CUDA=AUTO builds it when
# check_language(CUDA) finds a compiler and the machine has an NVIDIA driver (a compiler alone,
# as on CPU-only hosts with the toolkit installed, would spend ~40% of the build's CPU time on
# kernels nothing there can run); ON builds it wherever a compiler is found. A build without it
# compiles src/backend/cuda/cuda_stub.cpp instead, which reports CUDA as unavailable and why.
include(CheckLanguage)
set(SPIRALTORCH_WITH_CUDA OFF)
set(SPIRALTORCH_CUDA_REASON "")
string(TOUPPER "${SPIRALTORCH_CUDA}" _st_cuda_mode)
if(_st_cuda_mode STREQUAL "OFF")
  set(SPIRALTORCH_CUDA_REASON "the CUDA backend was disabled at build time (SPIRALTORCH_CUDA=OFF)")
else()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER AND _st_cuda_mode STREQUAL "AUTO" AND NOT EXISTS /proc/driver/nvidia/version
     AND NOT EXISTS /dev/nvidiactl)
    string(CONCAT SPIRALTORCH_CUDA_REASON "the build machine has a CUDA compiler but no NVIDIA driver, so "
      "SPIRALTORCH_CUDA=AUTO left the backend out (configure with -DSPIRALTORCH_CUDA=ON to build it anyway)")
  elseif(CMAKE_CUDA_COMPILER)
    set(SPIRALTORCH_WITH_CUDA ON)
  elseif(_st_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "SPIRALTORCH_CUDA=ON but no CUDA compiler was found")
  else()
    set(SPIRALTORCH_CUDA_REASON "no CUDA compiler was found when this build was configured")
  endif()
endif()

if(SPIRALTORCH_WITH_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90-real 90-virtual)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  list(FILTER SPIRALTORCH_SOURCES EXCLUDE REGEX "src/backend/cuda/cuda_stub\\.cpp$")
  # attention_cudnn.cpp is host code of the backend (cuDNN's graph API), built only with it.
  file(GLOB SPIRALTORCH_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/backend/cuda/*.cu)
  list(APPEND SPIRALTORCH_SOURCES ${SPIRALTORCH_CUDA_SOURCES})
  message(STATUS "SpiralTorch: CUDA backend ON (${CMAKE_CUDA_COMPILER}, archs ${CMAKE_CUDA_ARCHITECTURES})")
  # cuDNN (conv2d): CUDNN_ROOT, then the Python environment's nvidia-cudnn-cu* wheel, then the
  # system. Optional: without it CUDA convolutions stay on im2col + cuBLAS.
  set(_st_cudnn_hints "")
  foreach(_root IN ITEMS "${CUDNN_ROOT}" "$ENV{CUDNN_ROOT}")
    if(_root)
      list(APPEND _st_cudnn_hints "${_root}")
    endif()
  endforeach()
  find_program(_st_cudnn_python NAMES python3 python HINTS "${Python_EXECUTABLE}")
  if(Python_EXECUTABLE)
    set(_st_cudnn_python "${Python_EXECUTABLE}")
  endif()
  if(_st_cudnn_python)
    execute_process(COMMAND "${_st_cudnn_python}" -c "import nvidia.cudnn as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE _st_cudnn_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_st_cudnn_wheel)
      list(APPEND _st_cudnn_hints "${_st_cudnn_wheel}")
    endif()
  endif()
  find_path(SPIRALTORCH_CUDNN_INCLUDE_DIR cudnn.h HINTS ${_st_cudnn_hints} ${CUDAToolkit_INCLUDE_DIRS}
    PATH_SUFFIXES include)
  find_library(SPIRALTORCH_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 HINTS ${_st_cudnn_hints}
    PATH_SUFFIXES lib lib64)
  if(SPIRALTORCH_CUDNN_INCLUDE_DIR AND SPIRALTORCH_CUDNN_LIBRARY)
    set(SPIRALTORCH_WITH_CUDNN ON)
    if(_st_cudnn_wheel AND SPIRALTORCH_CUDNN_LIBRARY MATCHES "^${_st_cudnn_wheel}")
      set(SPIRALTORCH_CUDNN_INSTALL_RPATH "$ORIGIN/../nvidia/cudnn/lib")
    endif()
    message(STATUS "SpiralTorch: cuDNN ${SPIRALTORCH_CUDNN_LIBRARY}")
    # cuDNN's graph API through cudnn-frontend (header-only; PyPI's nvidia-cudnn-frontend puts its
    # headers in site-packages/include): scaled-dot-product attention's fused kernels
    # (attention_cudnn.cpp). CUDNN_FRONTEND_ROOT names another copy. Optional.
    set(_st_fe_hints "${CUDNN_FRONTEND_ROOT}" "$ENV{CUDNN_FRONTEND_ROOT}")
    if(_st_cudnn_python)
      execute_process(COMMAND "${_st_cudnn_python}" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        OUTPUT_VARIABLE _st_purelib OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      list(APPEND _st_fe_hints "${_st_purelib}")
    endif()
    find_path(SPIRALTORCH_CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h HINTS ${_st_fe_hints} PATH_SUFFIXES include
      NO_DEFAULT_PATH)
    # The frontend's headers include nvrtc.h (for engines we never instantiate: no NVRTC symbol is
    # linked): the toolkit's, or the nvidia-cuda-nvrtc wheel's.
    find_path(SPIRALTORCH_NVRTC_INCLUDE_DIR nvrtc.h HINTS ${CUDAToolkit_INCLUDE_DIRS} "${_st_purelib}/nvidia/cu13"
      "${_st_purelib}/nvidia/cuda_nvrtc" ${_st_fe_hints} PATH_SUFFIXES include)
    if(SPIRALTORCH_CUDNN_FRONTEND_INCLUDE_DIR AND SPIRALTORCH_NVRTC_INCLUDE_DIR)
      set(SPIRALTORCH_WITH_CUDNN_FRONTEND ON)
      message(STATUS "SpiralTorch: cudnn-frontend ${SPIRALTORCH_CUDNN_FRONTEND_INCLUDE_DIR} (cuDNN attention)")
    else()
      set(SPIRALTORCH_WITH_CUDNN_FRONTEND OFF)
      message(STATUS "SpiralTorch: cudnn-frontend or nvrtc.h not found (pip install --no-deps nvidia-cudnn-frontend, "
        "or CUDNN_FRONTEND_ROOT); CUDA attention uses its own flash kernels only")
    endif()
  else()
    set(SPIRALTORCH_WITH_CUDNN OFF)
    message(STATUS "SpiralTorch: cuDNN not found (CUDNN_ROOT, nvidia-cudnn-cu13 or the system); CUDA conv2d uses im2col")
  endif()
  # NCCL (st::distributed's "nccl" backend, src/runtime/distributed_nccl.cpp): NCCL_ROOT, then
  # the Python environment's nvidia-nccl-cu* wheel, then the system. Optional.
  set(_st_nccl_hints "")
  foreach(_root IN ITEMS "${NCCL_ROOT}" "$ENV{NCCL_ROOT}")
    if(_root)
      list(APPEND _st_nccl_hints "${_root}")
    endif()
  endforeach()
  if(_st_cudnn_python)
    execute_process(COMMAND "${_st_cudnn_python}" -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE _st_nccl_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_st_nccl_wheel)
      list(APPEND _st_nccl_hints "${_st_nccl_wheel}")
    endif()
  endif()
  find_path(SPIRALTORCH_NCCL_INCLUDE_DIR nccl.h HINTS ${_st_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
    PATH_SUFFIXES include)
  find_library(SPIRALTORCH_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_st_nccl_hints} PATH_SUFFIXES lib lib64)
  if(SPIRALTORCH_NCCL_INCLUDE_DIR AND SPIRALTORCH_NCCL_LIBRARY)
    set(SPIRALTORCH_WITH_NCCL ON)
    if(_st_nccl_wheel AND SPIRALTORCH_NCCL_LIBRARY MATCHES "^${_st_nccl_wheel}")
      set(SPIRALTORCH_NCCL_INSTALL_RPATH "$ORIGIN/../nvidia/nccl/lib")
      get_filename_component(_st_nccl_libdir "${SPIRALTORCH_NCCL_LIBRARY}" DIRECTORY)
      list(APPEND CMAKE_BUILD_RPATH "${_st_nccl_libdir}")
    endif()
    message(STATUS "SpiralTorch: NCCL ${SPIRALTORCH_NCCL_LIBRARY}")
  else()
    set(SPIRALTORCH_WITH_NCCL OFF)
    set(SPIRALTORCH_NCCL_REASON "NCCL was not found when this build was configured (NCCL_ROOT, nvidia-nccl-cu13 or the system)")
    message(STATUS "SpiralTorch: ${SPIRALTORCH_NCCL_REASON}")
  endif()
else()
  list(FILTER SPIRALTORCH_SOURCES EXCLUDE REGEX "src/backend/cuda/attention_cudnn\\.cpp$")
  message(STATUS "SpiralTorch: CUDA backend OFF: ${SPIRALTORCH_CUDA_REASON}")
  set(SPIRALTORCH_WITH_NCCL OFF)
  set(SPIRALTORCH_NCCL_REASON "NCCL needs the CUDA backend: ${SPIRALTORCH_CUDA_REASON}")
endif()

function(spiraltorch_configure_cuda target)
  # Only src/runtime/distributed_nccl.cpp sees nccl.h and the define.
  set(_nccl_src "${CMAKE_CURRENT_SOURCE_DIR}/src/runtime/distributed_nccl.cpp")
  if(SPIRALTORCH_WITH_NCCL)
    set_source_files_properties(${_nccl_src} TARGET_DIRECTORY ${target} PROPERTIES
      COMPILE_DEFINITIONS "SPIRALTORCH_WITH_NCCL=1" INCLUDE_DIRECTORIES "${SPIRALTORCH_NCCL_INCLUDE_DIR}")
    target_link_libraries(${target} PRIVATE ${SPIRALTORCH_NCCL_LIBRARY})
  else()
    set_source_files_properties(${_nccl_src} TARGET_DIRECTORY ${target} PROPERTIES
      COMPILE_DEFINITIONS "SPIRALTORCH_NCCL_REASON=\"${SPIRALTORCH_NCCL_REASON}\"")
  endif()
  if(SPIRALTORCH_WITH_CUDA)
    target_compile_definitions(${target} PUBLIC SPIRALTORCH_WITH_CUDA=1)
    # Not part of the installed interface: the public headers use no CUDA type.
    target_link_libraries(${target} PUBLIC $<BUILD_INTERFACE:CUDA::cudart>)
    target_link_libraries(${target} PRIVATE CUDA::cudart)
    if(TARGET CUDA::cublas AND TARGET CUDA::cublasLt)
      target_link_libraries(${target} PRIVATE CUDA::cublas CUDA::cublasLt)
      target_compile_definitions(${target} PRIVATE SPIRALTORCH_HAVE_CUBLAS=1)
    else()
      message(WARNING "SpiralTorch: cuBLAS not found; CUDA GEMM uses the plain fallback kernel")
    endif()
    if(SPIRALTORCH_WITH_CUDNN)
      target_include_directories(${target} PRIVATE ${SPIRALTORCH_CUDNN_INCLUDE_DIR})
      target_link_libraries(${target} PRIVATE ${SPIRALTORCH_CUDNN_LIBRARY})
      target_compile_definitions(${target} PRIVATE SPIRALTORCH_HAVE_CUDNN=1)
      if(SPIRALTORCH_WITH_CUDNN_FRONTEND)
        # Only attention_cudnn.cpp parses the (large) frontend headers, as system headers (their
        # own warnings are not ours).
        set_source_files_properties("${CMAKE_CURRENT_SOURCE_DIR}/src/backend/cuda/attention_cudnn.cpp"
          TARGET_DIRECTORY ${target} PROPERTIES COMPILE_DEFINITIONS "SPIRALTORCH_HAVE_CUDNN_FRONTEND=1"
          COMPILE_OPTIONS "-isystem;${SPIRALTORCH_CUDNN_FRONTEND_INCLUDE_DIR};-isystem;${SPIRALTORCH_NVRTC_INCLUDE_DIR}"
          SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endif()
    # The C++ flags of the library (-Wall, -march=x86-64-v2, ...) are not nvcc flags.
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda --expt-relaxed-constexpr -Xcompiler=-fno-math-errno
        -Xcompiler=-Wno-deprecated-declarations>)
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
  else()
    target_compile_definitions(${target} PRIVATE "SPIRALTORCH_CUDA_REASON=\"${SPIRALTORCH_CUDA_REASON}\"")
  endif()
endfunction()
