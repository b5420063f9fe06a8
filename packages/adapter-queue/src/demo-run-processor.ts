import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JsonValue, Run, RunProcessingContext, RunProcessingResult, RunProcessor } from '@svc/core';

/** Options of {@link DemoRunProcessor}. */
export interface DemoRunProcessorOptions {
  /** Ms each run takes; default 500. */
  readonly delayMs?: number;
  /** A message containing this fails the run with a reason (no retry); default `[fail]`. */
  readonly failMarker?: string;
  /** A message containing this makes every attempt throw (retried, then failed); default `[crash]`. */
  readonly crashMarker?: string;
  /**
   * Whether it reads the run's files through `context.files` (default true). False where
   * file keys name files kept elsewhere (`files.verify_keys: false`): `read_files` is then empty.
   */
  readonly readFiles?: boolean;
}

/**
 * A stand-in agent runtime for the example API server and demos, NOT an agent: it reports
 * progress 0 %, waits `delayMs` (stopping at once when the context's signal aborts),
 * reads each of the run's files (foreground, then background) through `context.files` as a
 * stream, measuring its size and SHA-256, reports 100 % and succeeds with an output naming
 * what the run was started with (`read_files`: `[{file_key, file_name, content_type,
 * size_bytes, sha256}]`, the size and digest of the bytes it read), unless
 * the run's message contains `failMarker` (resolves `{ok: false}`) or `crashMarker`
 * (throws, so attempts and backoff can be watched). Source: docs/CONTRACT.md "Runs lifecycle", "Files".
 */
export class DemoRunProcessor implements RunProcessor {
  private readonly delayMs: number;
  private readonly failMarker: string;
  private readonly crashMarker: string;
  private readonly readFiles: boolean;

  /** @param options - delay and markers; defaults 500 ms, `[fail]`, `[crash]`. */
  constructor(options: DemoRunProcessorOptions = {}) {
    this.delayMs = options.delayMs ?? 500;
    this.failMarker = options.failMarker ?? '[fail]';
    this.crashMarker = options.crashMarker ?? '[crash]';
    this.readFiles = options.readFiles ?? true;
  }

  /**
   * @throws Error for a message with the crash marker (a retryable failure).
   * @throws AbortError (its `cause` the signal's reason) when `context.signal` aborts during the wait.
   * @throws RunFailedError when a file of the run is gone (from `context.files.open`).
   */
  async process(run: Run, context: RunProcessingContext): Promise<RunProcessingResult> {
    await context.reportProgress({ percent: 0, message: 'Started.' });
    await sleep(this.delayMs, undefined, { signal: context.signal });
    const message = run.request.message ?? '';
    if (message.includes(this.crashMarker)) throw new Error('the demo processor was asked to crash');
    if (message.includes(this.failMarker)) return { ok: false, reason: 'The demo agent was asked to fail.' };
    const readFiles: JsonValue[] = [];
    if (run.request.kind === 'files' && this.readFiles) {
      for (const named of [...run.request.files, ...run.request.backgroundFiles]) readFiles.push(await readFile(named.file_key, context));
    }
    await context.reportProgress({ percent: 100, message: 'Done.' });
    const files = run.request.kind === 'files' ? run.request.files.length : 0;
    return { ok: true, output: { demo: true, files, message_characters: message.length, read_files: readFiles } };
  }
}

/** Reads one file of the run to its end, as a stream: what an agent reading a document does. */
async function readFile(fileKey: string, context: RunProcessingContext): Promise<JsonValue> {
  const file = await context.files.open(fileKey);
  const digest = createHash('sha256');
  let size = 0;
  try {
    for await (const chunk of file.stream.iterator()) {
      context.signal.throwIfAborted();
      const bytes = chunk as Buffer;
      size += bytes.length;
      digest.update(bytes);
    }
  } finally {
    file.stream.destroy();
  }
  return { file_key: file.fileKey, file_name: file.fileName, content_type: file.contentType, size_bytes: size, sha256: digest.digest('hex') };
}
