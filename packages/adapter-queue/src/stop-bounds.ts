// Bounds of the stop and close paths, in a module without imports so that the in-memory
// entry (`@svc/adapter-queue/memory`) and a composition root's settings can use them
// without loading BullMQ or ioredis.

/**
 * Ms a Redis QUIT may take on close. QUIT is one round trip that a live Redis answers in
 * well under a millisecond on a LAN; a paused Redis (SIGSTOP) or a half-open socket never
 * answers it (measured: ioredis `quit()` pending for ever), so without a bound a stop
 * would hang. After this the socket is dropped, which loses nothing: QUIT carries no
 * data and Redis frees the connection when it sees the close.
 */
export const QUIT_TIMEOUT_MS = 1_000;

/**
 * Ms a worker's close may take past its grace: BullMQ's forced close (measured 1 ms with
 * Redis lost or paused) and the recording of runs BullMQ failed meanwhile (two or three
 * round trips, under 10 ms on a live Redis). 250 ms leaves room for a loaded event loop
 * and is small next to the 5 s default close budget; past it those steps are left
 * unfinished (a run not recorded as failed stays as it is, its job is failed in Redis).
 */
export const RUN_WORKER_STOP_SLACK_MS = 250;
