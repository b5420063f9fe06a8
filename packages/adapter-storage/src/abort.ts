/**
 * `work`, or a rejection with `signal.reason` as soon as `signal` aborts, whichever comes
 * first: a body that stalls must not hold an abort back (a stream pipeline ends only when
 * its source next yields).
 *
 * @param work - what to wait for; its later rejection, if any, is left handled.
 * @param signal - the caller's abort signal, if any.
 * @throws `signal.reason` when `signal` aborts first; what `work` rejects with.
 */
export async function untilDoneOrAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  work.catch(() => undefined);
  signal.throwIfAborted();
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
