# Debian's CMake packages (gRPC, Abseil, libssh, ...) import shared libraries. For a
# static build every imported target found so far is pointed at the static archive
# beside its .so, which Debian ships for all of them (docs/DESIGN.md §8b, the self-contained binary).
function(use_static_archives)
  get_directory_property(imported IMPORTED_TARGETS)
  foreach(target ${imported})
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "SHARED_LIBRARY|UNKNOWN_LIBRARY|STATIC_LIBRARY")
      continue()
    endif()
    foreach(property IMPORTED_LOCATION IMPORTED_LOCATION_NONE IMPORTED_LOCATION_NOCONFIG
                     IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_RELWITHDEBINFO)
      get_target_property(location ${target} ${property})
      if(location AND location MATCHES "\\.so")
        string(REGEX REPLACE "\\.so(\\.[0-9.]+)?$" ".a" archive "${location}")
        if(NOT EXISTS "${archive}")
          message(FATAL_ERROR "NASPERF_STATIC: no static archive for ${target} (${location})")
        endif()
        set_target_properties(${target} PROPERTIES ${property} "${archive}")
      endif()
    endforeach()
  endforeach()
endfunction()
