# Writes OUT, a header defining TUNE_BUILD ("commit abc1234, Release" or "commit unknown, ..."; the
# commit's hash, never a tag's name, which --exclude=* keeps describe from giving), at
# every build, and only when its text changes (so an unchanged commit relinks nothing): `tune
# --version` names the build in a bug report. Run with cmake -DSOURCE_DIR= -DOUT= -DBUILD_TYPE= -P.
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12 --exclude=*
                  OUTPUT_VARIABLE described RESULT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(status EQUAL 0 AND described)
    set(commit "${described}")
  endif()
endif()
if(NOT BUILD_TYPE)
  set(BUILD_TYPE "no build type")
endif()
set(text "#pragma once\n#define TUNE_BUILD \"commit ${commit}, ${BUILD_TYPE}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUT}" "${text}")
endif()
