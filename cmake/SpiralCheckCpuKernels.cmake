# Run on one capability's partially linked CPU kernels (cmake/SpiralCpuKernels.cmake) before its
# symbols are made local: fails when the object defines a variable that must exist once per
# program (a static local of an inline function, an inline variable, a static data member of a
# template, their guard variables). Made local, such a variable would get a second copy in the
# kernels, apart from the one the rest of the library uses. Weak vtables and type_info objects are
# fine: copies of them behave the same.
#   cmake -DNM=<nm> -DOBJECT=<file.o> -DCAPABILITY=<name> -P SpiralCheckCpuKernels.cmake
execute_process(COMMAND "${NM}" --defined-only "${OBJECT}" OUTPUT_VARIABLE _syms RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${OBJECT}")
endif()
string(REPLACE "\n" ";" _lines "${_syms}")
set(_bad "")
foreach(_line IN LISTS _lines)
  if(_line MATCHES "^[0-9a-fA-F]* ([uV]) (.+)$")
    set(_kind "${CMAKE_MATCH_1}")
    set(_name "${CMAKE_MATCH_2}")
    if(_kind STREQUAL "u" OR (_name MATCHES "^_Z" AND NOT _name MATCHES "^_ZT[VIST]"))
      list(APPEND _bad "${_name}")
    endif()
  endif()
endforeach()
if(_bad)
  list(JOIN _bad "\n  " _list)
  message(FATAL_ERROR "CPU kernels (${CAPABILITY}) define program-wide variables that would be duplicated:\n  ${_list}\n"
                      "Move them out of the kernel sources (src/backend/cpu/dispatch.h).")
endif()
