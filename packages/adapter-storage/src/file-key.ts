/** A core file key: `file_` and 32 lowercase hex digits (core `StoredFile.fileKey`). */
const FILE_KEY = /^file_[0-9a-f]{32}$/u;

/**
 * Refuses anything but a core file key, before it becomes part of a path or an object
 * name, so that no key can reach outside the store (`../`, `/`, `\`, NUL, `.json`).
 *
 * @param fileKey - the key a caller passed.
 * @throws RangeError when `fileKey` is not `file_` and 32 lowercase hex digits (the
 *   message never repeats the key).
 */
export function assertFileKey(fileKey: string): void {
  if (typeof fileKey !== 'string' || !FILE_KEY.test(fileKey)) throw new RangeError('a file key is file_ and 32 lowercase hex digits');
}

/**
 * Refuses a declared size that is not a whole number of bytes.
 *
 * @param sizeBytes - the declared size, in bytes.
 * @throws RangeError when `sizeBytes` is not a non-negative safe integer.
 */
export function assertSizeBytes(sizeBytes: number): void {
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 0) throw new RangeError('sizeBytes is a whole number of bytes, 0 or more');
}
