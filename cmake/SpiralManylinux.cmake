# Binaries for the manylinux_2_28 wheel tag: loadable on any x86-64 Linux with glibc >= 2.28,
# whatever glibc and GCC built them (Debian 12 here: glibc 2.36, GCC 12).
#   - libstdc++ is linked statically and kept private (--exclude-libs): the newer GLIBCXX/CXXABI
#     versions GCC 12's headers require then come with the binary, not from the system's libstdc++.
#   - glibc_2_28_shim.c binds every glibc symbol newer than 2.28 (in our objects and in
#     libstdc++.a) to its 2.28-era version or to an equivalent; libpthread.so.0 and libdl.so.2 are
#     named as needed because on glibc < 2.34 those versions live there.
# scripts/test.sh checks the result with `auditwheel show` (the wheel must be manylinux_2_28).
# pyproject.toml turns it on for every wheel; a plain CMake build leaves it off.
option(SPIRALTORCH_MANYLINUX "Link for the manylinux_2_28 floor: static libstdc++, glibc <= 2.28 symbols" OFF)
if(SPIRALTORCH_MANYLINUX)
  enable_language(C)  # the shim; at directory scope, where CMake requires it
endif()

# Applies the floor to a shared library or module `target` (no-op unless SPIRALTORCH_MANYLINUX).
function(spiraltorch_link_manylinux target)
  if(NOT SPIRALTORCH_MANYLINUX)
    return()
  endif()
  if(NOT TARGET spiral_glibc_2_28)
    add_library(spiral_glibc_2_28 OBJECT "${PROJECT_SOURCE_DIR}/cmake/glibc_2_28_shim.c")
    set_target_properties(spiral_glibc_2_28 PROPERTIES POSITION_INDEPENDENT_CODE ON C_STANDARD 11)
    # -fno-builtin: the shim defines exp, log, pow, ... itself.
    target_compile_options(spiral_glibc_2_28 PRIVATE -O2 -fno-builtin)
  endif()
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:spiral_glibc_2_28>)
  target_link_options(${target} PRIVATE -static-libstdc++ -Wl,--exclude-libs,ALL
    -Wl,--no-as-needed -l:libpthread.so.0 -l:libdl.so.2 -Wl,--as-needed)
endfunction()
