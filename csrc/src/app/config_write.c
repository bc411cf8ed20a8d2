/* `mcpping --config FILE --wrap|--unwrap --write`: the backup, the
 * replacement and every line it prints, once for both commands (the
 * rewrite itself is config_rewrite.c; the start check is the binding's,
 * which spawns). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/files.h"
#include "app/text.h"
#include "mcpping.h"

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Copies src to a new file dst (refused if dst exists) with src's mode: a
 * config can hold secrets, so its backup is no more readable than it. */
static int copy_new(const char *src, const char *dst, mode_t mode) {
  int in = open(src, O_RDONLY | MCPP__O_CLOEXEC);
  if (in < 0) return -1;
  int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | MCPP__O_CLOEXEC, mode & 07777);
  int rc = out < 0 ? -1 : 0;
  char buf[8192];
  while (rc == 0) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      rc = n < 0 ? -1 : 0;
      break;
    }
    rc = write_all(out, buf, (size_t)n);
  }
  int saved = errno;
  close(in);
  if (out >= 0 && close(out) && rc == 0) rc = -1, saved = errno;
  errno = saved;
  return rc;
}

/* The replacement is written beside the file and renamed over it, so a
 * crash leaves the old config or the new one, never half of one. */
static int replace(const char *path, const char *text, size_t len, mode_t mode,
                   mcpp__text *tmp) {
  mcpp__text_printf(tmp, "%s.mcpping-tmp", path);
  if (tmp->oom) return errno = ENOMEM, -1;
  int fd = open(tmp->p, O_WRONLY | O_CREAT | O_TRUNC | MCPP__O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  int rc = mcpp__fchmod(fd, tmp->p, mode & 07777) || write_all(fd, text, len) ? -1 : 0;
  int saved = errno;
  if (close(fd) && rc == 0) rc = -1, saved = errno;
  if (rc == 0 && rename(tmp->p, path)) rc = -1, saved = errno;
  if (rc) unlink(tmp->p);
  errno = saved;
  return rc;
}

int mcpp_config_write(const char *path, const char *text, size_t len, int unwrap,
                      size_t changed, int had_comments, char **line) {
  mcpp__text out = {0}, backup = {0}, tmp = {0};
  int status = MCPP_EXIT_ALIVE;
  struct stat st;
  if (changed == 0) {
    mcpp__text_printf(&out, "mcpping: %s: no server to %s; left as it is\n", path,
                      unwrap ? "unwrap" : "wrap");
  } else {
    /* FILE.bak, or the first FILE.bak.N that is free: no backup is lost. */
    mcpp__text_printf(&backup, "%s.bak", path);
    for (unsigned n = 1; !backup.oom && mcpp__lstat(backup.p, &st) == 0; n++) {
      mcpp__text_free(&backup);
      mcpp__text_printf(&backup, "%s.bak.%u", path, n);
    }
    int rc = backup.oom ? (errno = ENOMEM, -1) : stat(path, &st);
    if (rc == 0) rc = copy_new(path, backup.p, st.st_mode);
    if (rc == 0) rc = replace(path, text, len, st.st_mode, &tmp);
    if (rc) {
      mcpp__text_printf(&out, "mcpping: cannot write %s: %s\n", path, strerror(errno));
      status = MCPP_EXIT_USAGE;
    } else {
      mcpp__text_printf(&out, "mcpping: %s %zu server%s in %s%s; the original is in %s\n",
                        unwrap ? "unwrapped" : "wrapped", changed, changed == 1 ? "" : "s",
                        path,
                        had_comments ? " (its comments and trailing commas were not kept)" : "",
                        backup.p);
    }
  }
  mcpp__text_free(&backup);
  mcpp__text_free(&tmp);
  *line = mcpp__text_take(&out);
  return *line ? status : MCPP_ERR_NOMEM;
}
