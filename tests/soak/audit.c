/* What /proc says about us: open fds, children left behind, RSS. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "soak.h"

void audit_list_fds(FILE *out) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[300], target[256];
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(path, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    fprintf(out, "soak: fd %s -> %s\n", e->d_name, target);
  }
  closedir(d);
}

int audit_count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1; /* the directory's own fd */
}

/* Reads the state letter and parent of /proc/<pid>/stat; 0 if gone. */
static int read_stat(int pid, char *state, int *ppid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* The command name may hold spaces and parentheses: skip to the last ')'. */
  char *p = strrchr(buf, ')');
  if (!p || sscanf(p + 1, " %c %d", state, ppid) != 2) return 0;
  return 1;
}

int audit_count_children(void) {
  DIR *d = opendir("/proc");
  if (!d) return -1;
  int n = 0, me = getpid();
  struct dirent *e;
  while ((e = readdir(d))) {
    int pid = atoi(e->d_name);
    char state;
    int ppid;
    if (pid > 0 && read_stat(pid, &state, &ppid) && ppid == me) n++;
  }
  closedir(d);
  return n;
}

int audit_is_leftover(int pid) {
  char state;
  int ppid;
  if (pid <= 0) return 0;
  if (read_stat(pid, &state, &ppid) && ppid == getpid()) return 1;
  /* Anything left in its process group. */
  return kill(-pid, 0) == 0 || errno == EPERM;
}

int audit_has_exited(int pid) {
  char state;
  int ppid;
  return !read_stat(pid, &state, &ppid) || state == 'Z' || state == 'X';
}

long audit_rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  fclose(f);
  return kib;
}
