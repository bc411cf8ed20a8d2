/*
 * The keeper: one tiny process per host that kills every server process
 * group the host still has when the host dies, even by SIGKILL. It holds
 * one end of a socket whose other end only the host holds; its EOF means
 * the host is gone. Started lazily on the first spawn; best effort (a
 * host where it cannot start still works, unguarded). Internal.
 */
#ifndef MCPP_KEEPER_H
#define MCPP_KEEPER_H

/* Tells the keeper to kill process group pgid if the host dies. */
void mcpp__keeper_watch(int pgid);

/* Tells it the group is gone (killed and reaped): forget it, so that a
 * reused id is never killed. */
void mcpp__keeper_forget(int pgid);

/* For a spawn whose child registers itself (platform.h's
 * mcpp__spawn_registered): locks the keeper, starting it if need be, and
 * returns its socket (-1 if there is none); the socket stays open until
 * mcpp__keeper_release, which must follow. */
int mcpp__keeper_hold(void);
void mcpp__keeper_release(void);

/* Starts the keeper now if it is not running (tests count its fd in their
 * baseline). Returns 0, or -1 if it cannot start. */
int mcpp__keeper_ensure(void);

/* The name the keeper runs under (its $0, in /proc/PID/cmdline). */
#define MCPP__KEEPER_NAME "mcpping-keeper"

#endif
