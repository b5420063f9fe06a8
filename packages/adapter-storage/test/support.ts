import { createHash } from 'node:crypto';
import { expect } from 'chai';

/** `bytes` as a request body of `chunkBytes`-byte chunks. */
export async function* bodyOf(bytes: Uint8Array, chunkBytes = 16 * 1024): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += chunkBytes) yield bytes.subarray(at, Math.min(at + chunkBytes, bytes.length));
}

/** SHA-256 of `bytes`, lowercase hex. */
export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** File keys a store must refuse: path traversal, separators, NUL, wrong case or length, sidecar names. */
export function badFileKeys(): string[] {
  const hex = 'a'.repeat(32);
  return [
    '',
    '../../etc/passwd',
    '..',
    `file_${hex}/../../x`,
    `../file_${hex}`,
    `file_${hex}.json`,
    `file_${hex}.0123.part`,
    `file_${'A'.repeat(32)}`,
    `file_${hex.slice(1)}`,
    `file_${hex}0`,
    `file_${hex}\0`,
    `file_${hex}\n`,
    `/file_${hex}`,
    `uploads/file_${hex}`,
    `file_${hex.slice(2)}\\..`,
  ];
}

/** Awaits `promise`, expecting it to reject with an instance of `type` (and a message matching `message`); returns the error. */
export async function expectRejection<E extends Error>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E, message?: RegExp): Promise<E> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, 'the promise rejects').to.be.instanceOf(type);
  if (message !== undefined) expect((caught as Error).message).to.match(message);
  return caught as E;
}

/**
 * A body that sends `bytes` and then nothing (a client that stalls) until `release()`,
 * when it ends: for checking that an abort is not held back by a silent body.
 */
export function stallingBody(bytes: Uint8Array): { body: AsyncIterable<Uint8Array>; sent: () => boolean; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let sent = false;
  async function* body(): AsyncGenerator<Uint8Array> {
    yield bytes;
    sent = true;
    await released;
  }
  return { body: body(), sent: () => sent, release };
}
