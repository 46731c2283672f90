# Configure-time checks that the compiler builds correct code with the flags winokit uses.
#
# winokit_checked_flags(<out-var> <name> <flags...>)
#   Compiles and runs cmake/probes/wide_constant_copy.cpp with the build type's optimisation
#   flags plus <flags>. GCC 12.2 (Debian 12) stores a 32- or 64-byte constant whose 8-byte words
#   are x, x, ..., 0 as a broadcast of x when it copies it with 256- or 512-bit integer moves: in
#   ix86_convert_const_wide_int_to_broadcast (gcc/config/i386/i386-expand.cc) it compares only
#   the words the wide integer stores, and a wide integer does not store high words that are the
#   sign extension of the word below (here: zeros). Those moves are on with AVX-512 code
#   generation and with the Intel AVX-512 tunings (-march=native on a Xeon, rocketlake,
#   icelake, sapphirerapids, ...); never with x86-64-v2 (no AVX) nor x86-64-v3 with the generic
#   tuning. When the probe fails, the check retries with -mtune-ctrl=^inter_unit_moves_to_vec,
#   which turns off the only way into that function (GCC then loads the constant from memory,
#   as it does without AVX); <out-var> gets <flags> plus that workaround. A compiler that still
#   fails stops the configuration: it would build wrong constants silently.
include_guard(GLOBAL)
include(CheckCXXCompilerFlag)

set(WINOKIT_PROBE_SOURCE ${CMAKE_CURRENT_LIST_DIR}/probes/wide_constant_copy.cpp)
set(WINOKIT_BROADCAST_WORKAROUND -mtune-ctrl=^inter_unit_moves_to_vec)

function(winokit_probe_wide_constants result_var)
  set(flags ${ARGN})
  string(TOUPPER "${CMAKE_BUILD_TYPE}" build_type)
  separate_arguments(opt_flags UNIX_COMMAND "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${build_type}}")
  string(MD5 key "${opt_flags};${flags}")
  try_run(winokit_probe_${key}_rc winokit_probe_${key}_compiled
    ${CMAKE_BINARY_DIR}/CMakeFiles/winokit_probes/${key}
    ${WINOKIT_PROBE_SOURCE}
    COMPILE_DEFINITIONS ${opt_flags} ${flags}
    COMPILE_OUTPUT_VARIABLE compile_out
    RUN_OUTPUT_VARIABLE run_out)
  if(NOT winokit_probe_${key}_compiled)
    list(JOIN flags " " shown)
    message(FATAL_ERROR "winokit: the compiler rejects the flags '${shown}':\n${compile_out}")
  endif()
  if("${winokit_probe_${key}_rc}" STREQUAL "0")
    set(${result_var} TRUE PARENT_SCOPE)
  else()
    set(${result_var} FALSE PARENT_SCOPE)
  endif()
endfunction()

function(winokit_checked_flags out_var name)
  set(flags ${ARGN})
  list(JOIN flags " " shown)
  if(CMAKE_CROSSCOMPILING)
    message(WARNING "winokit: cross-compiling, so the compiler checks of ${name} do not run")
    set(${out_var} ${flags} PARENT_SCOPE)
    return()
  endif()
  winokit_probe_wide_constants(ok ${flags})
  if(ok)
    message(STATUS "winokit: ${name} (${shown}): constants copied right")
    set(${out_var} ${flags} PARENT_SCOPE)
    return()
  endif()
  check_cxx_compiler_flag(${WINOKIT_BROADCAST_WORKAROUND} has_workaround)
  if(has_workaround)
    winokit_probe_wide_constants(ok ${flags} ${WINOKIT_BROADCAST_WORKAROUND})
  endif()
  if(NOT ok)
    message(FATAL_ERROR
      "winokit: with '${shown}' (${name}) this compiler copies the constant "
      "{x, x, x, 0} as {x, x, x, x} (cmake/probes/wide_constant_copy.cpp; GCC 12.2's broadcast "
      "of wide constants, see docs/design.md) and no workaround helps. Use the default "
      "WINOKIT_MARCH=x86-64-v2 or another compiler.")
  endif()
  message(STATUS "winokit: ${name} (${shown}): GCC's wide-constant broadcast bug is present; "
                 "adding ${WINOKIT_BROADCAST_WORKAROUND}, with which the probe passes")
  set(${out_var} ${flags} ${WINOKIT_BROADCAST_WORKAROUND} PARENT_SCOPE)
endfunction()

# winokit_kernel_flags(<out-var> <name> <flags...>)
#   The per-file flags of a dispatched kernel: <flags> on top of WINOKIT_ARCH_FLAGS, checked as
#   above; <out-var> gets <flags> plus the workaround when these flags need it and the whole
#   build's flags do not already carry it.
function(winokit_kernel_flags out_var name)
  winokit_checked_flags(checked "${name}" ${WINOKIT_ARCH_FLAGS} ${ARGN})
  set(file_flags ${ARGN})
  if(WINOKIT_BROADCAST_WORKAROUND IN_LIST checked AND
     NOT WINOKIT_BROADCAST_WORKAROUND IN_LIST WINOKIT_ARCH_FLAGS)
    list(APPEND file_flags ${WINOKIT_BROADCAST_WORKAROUND})
  endif()
  set(${out_var} ${file_flags} PARENT_SCOPE)
endfunction()
