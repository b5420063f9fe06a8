import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/**
 * s3rver 3.7.1 on 127.0.0.1 (a port the OS picks) with one bucket, in a temporary
 * directory: the S3-compatible server of the tests. Its limits (packages/adapter-storage
 * README "s3rver"): it checks no signature (a tampered presigned URL is accepted), no
 * `CopySourceIfMatch`, and writes a single PUT in place.
 * @param bucket - the bucket made (3+ characters).
 */
export async function startS3rver(bucket: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const directory = await mkdtemp(join(tmpdir(), 'svc-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    close: async () => {
      server.httpServer?.closeAllConnections();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
