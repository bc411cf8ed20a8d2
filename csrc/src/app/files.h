/* The little the commands need of the file system beyond C11, on POSIX
 * and on Windows (mingw), which has no O_CLOEXEC (O_NOINHERIT keeps a
 * descriptor out of spawned servers there), no fchmod and no symbolic
 * links for lstat to see. */
#ifndef MCPP_APP_FILES_H
#define MCPP_APP_FILES_H

#include <fcntl.h>
#include <sys/stat.h>

#ifdef _WIN32
#define MCPP__O_CLOEXEC O_NOINHERIT
#define mcpp__lstat(path, st) stat((path), (st))
#define mcpp__fchmod(fd, path, mode) chmod((path), (mode))
#else
#define MCPP__O_CLOEXEC O_CLOEXEC
#define mcpp__lstat(path, st) lstat((path), (st))
#define mcpp__fchmod(fd, path, mode) fchmod((fd), (mode))
#endif

#endif
