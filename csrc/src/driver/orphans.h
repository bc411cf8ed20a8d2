/*
 * Servers that outlive their connection: sent SIGKILL, still not reaped
 * when the connection had to close (a process stuck in the kernel, D
 * state, past the kill wait). They are watched on here, apart from any
 * loop, until reaped, and only then forgotten by the keeper. Internal to
 * the driver.
 */
#ifndef MCPP_ORPHANS_H
#define MCPP_ORPHANS_H

/* Takes over watching pid (and its exit fd, or -1) until it is reaped.
 * Returns 0 (exit_fd is ours now), or -1 if it cannot (no memory, no
 * thread): then the caller keeps exit_fd. */
int mcpp__orphan_adopt(int pid, int exit_fd);

/* Servers adopted and not yet reaped, plus 1 while the watching thread
 * runs. For tests. */
int mcpp__orphans(void);

#endif
