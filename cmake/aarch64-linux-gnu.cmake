# Cross build of the static binary for 64-bit ARM NAS boxes (scripts/package.sh with
# NASPERF_AARCH64=1): Debian's cross compiler and the :arm64 static archives
# (dpkg --add-architecture arm64). The code generators (protoc, grpc_cpp_plugin) are
# the host's own and run here.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
