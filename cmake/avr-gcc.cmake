# CMake toolchain file for avr-gcc (Debian's gcc-avr, binutils-avr, avr-libc).
# Used by firmware/avr/CMakeLists.txt: cmake -DCMAKE_TOOLCHAIN_FILE=cmake/avr-gcc.cmake.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR avr)

find_program(AVR_GCC avr-gcc REQUIRED)
find_program(AVR_OBJCOPY avr-objcopy REQUIRED)
find_program(AVR_SIZE avr-size REQUIRED)
set(CMAKE_C_COMPILER ${AVR_GCC})
set(CMAKE_ASM_COMPILER ${AVR_GCC})

# No host libraries or programs: the try_compile of a bare-metal target cannot link an
# executable without -mmcu, so test a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
