# Finds the compression libraries that have no CMake package of their own on common systems (zstd,
# LZ4, Snappy) and defines an imported target for each: tsf_dep::zstd, tsf_dep::lz4, tsf_dep::snappy.
# Used by the build and, installed next to tsfConfig.cmake, by find_dependency(tsf_compression).
# COMPONENTS (zstd, lz4, snappy) limits the search to those libraries; without it all three are needed.
include(FindPackageHandleStandardArgs)

if(tsf_compression_FIND_COMPONENTS)
  set(_tsf_comp_want ${tsf_compression_FIND_COMPONENTS})
else()
  set(_tsf_comp_want zstd lz4 snappy)
endif()
set(_tsf_comp_vars)
set(_tsf_comp_deps)
if("zstd" IN_LIST _tsf_comp_want)
  find_path(TSF_ZSTD_INCLUDE_DIR zstd.h)
  find_library(TSF_ZSTD_LIBRARY NAMES zstd libzstd)
  list(APPEND _tsf_comp_vars TSF_ZSTD_LIBRARY TSF_ZSTD_INCLUDE_DIR)
  list(APPEND _tsf_comp_deps ZSTD)
endif()
if("lz4" IN_LIST _tsf_comp_want)
  find_path(TSF_LZ4_INCLUDE_DIR lz4.h)
  find_library(TSF_LZ4_LIBRARY NAMES lz4 liblz4)
  list(APPEND _tsf_comp_vars TSF_LZ4_LIBRARY TSF_LZ4_INCLUDE_DIR)
  list(APPEND _tsf_comp_deps LZ4)
endif()
if("snappy" IN_LIST _tsf_comp_want)
  find_path(TSF_SNAPPY_INCLUDE_DIR snappy-c.h)
  find_library(TSF_SNAPPY_LIBRARY NAMES snappy)
  list(APPEND _tsf_comp_vars TSF_SNAPPY_LIBRARY TSF_SNAPPY_INCLUDE_DIR)
  list(APPEND _tsf_comp_deps SNAPPY)
endif()
find_package_handle_standard_args(tsf_compression REQUIRED_VARS ${_tsf_comp_vars})
mark_as_advanced(TSF_ZSTD_INCLUDE_DIR TSF_ZSTD_LIBRARY TSF_LZ4_INCLUDE_DIR TSF_LZ4_LIBRARY
  TSF_SNAPPY_INCLUDE_DIR TSF_SNAPPY_LIBRARY)

if(tsf_compression_FOUND)
  foreach(dep ${_tsf_comp_deps})
    string(TOLOWER ${dep} name)
    if(NOT TARGET tsf_dep::${name})
      add_library(tsf_dep::${name} UNKNOWN IMPORTED)
      set_target_properties(tsf_dep::${name} PROPERTIES IMPORTED_LOCATION "${TSF_${dep}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${TSF_${dep}_INCLUDE_DIR}")
    endif()
  endforeach()
  # Snappy is C++: a static libsnappy needs the C++ runtime when a C program links it.
  if("SNAPPY" IN_LIST _tsf_comp_deps AND TSF_SNAPPY_LIBRARY MATCHES "\\.a$")
    set_property(TARGET tsf_dep::snappy APPEND PROPERTY INTERFACE_LINK_LIBRARIES stdc++)
  endif()
endif()
