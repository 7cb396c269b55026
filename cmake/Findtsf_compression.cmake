# Finds the compression libraries that have no CMake package of their own on common systems (zstd,
# LZ4, Snappy) and defines an imported target for each: tsf_dep::zstd, tsf_dep::lz4, tsf_dep::snappy.
# Used by the build and, installed next to tsfConfig.cmake, by find_dependency(tsf_compression).
include(FindPackageHandleStandardArgs)

find_path(TSF_ZSTD_INCLUDE_DIR zstd.h)
find_library(TSF_ZSTD_LIBRARY NAMES zstd libzstd)
find_path(TSF_LZ4_INCLUDE_DIR lz4.h)
find_library(TSF_LZ4_LIBRARY NAMES lz4 liblz4)
find_path(TSF_SNAPPY_INCLUDE_DIR snappy-c.h)
find_library(TSF_SNAPPY_LIBRARY NAMES snappy)
find_package_handle_standard_args(tsf_compression REQUIRED_VARS
  TSF_ZSTD_LIBRARY TSF_ZSTD_INCLUDE_DIR TSF_LZ4_LIBRARY TSF_LZ4_INCLUDE_DIR
  TSF_SNAPPY_LIBRARY TSF_SNAPPY_INCLUDE_DIR)
mark_as_advanced(TSF_ZSTD_INCLUDE_DIR TSF_ZSTD_LIBRARY TSF_LZ4_INCLUDE_DIR TSF_LZ4_LIBRARY
  TSF_SNAPPY_INCLUDE_DIR TSF_SNAPPY_LIBRARY)

if(tsf_compression_FOUND)
  foreach(dep ZSTD LZ4 SNAPPY)
    string(TOLOWER ${dep} name)
    if(NOT TARGET tsf_dep::${name})
      add_library(tsf_dep::${name} UNKNOWN IMPORTED)
      set_target_properties(tsf_dep::${name} PROPERTIES IMPORTED_LOCATION "${TSF_${dep}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${TSF_${dep}_INCLUDE_DIR}")
    endif()
  endforeach()
  # Snappy is C++: a static libsnappy needs the C++ runtime when a C program links it.
  if(TSF_SNAPPY_LIBRARY MATCHES "\\.a$")
    set_property(TARGET tsf_dep::snappy APPEND PROPERTY INTERFACE_LINK_LIBRARIES stdc++)
  endif()
endif()
