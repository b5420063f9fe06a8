/**
 * Same-work peer of the upload (`upload-local`): bare `node:http` doing the disk work of
 * the project's upload by hand. `PUT /upload/NAME` with `Content-Length`: the body is
 * piped through SHA-256 (and a byte count) into `DIR/NAME.part` (a write stream with
 * `flush`: fsync before close), which is renamed to `DIR/NAME` when it holds exactly
 * `Content-Length` bytes, then `DIR` is fsynced; `200 {"data": {size_bytes, sha256}}`.
 * `GET /livez` answers 200. Not mirrored: the signed address, the file record, the
 * sidecar of facts and `complete`'s rename into another folder, the sniffing of the head.
 * `node node-upload.js PORT DIR`; stops on SIGTERM.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const dir = process.argv[3];
if (dir === undefined) throw new Error('usage: node-upload PORT DIR');

function answer(res: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': bytes.length });
  res.end(bytes);
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/livez') {
    answer(res, 200, { status: 'ok' });
    return;
  }
  const name = /^\/upload\/([a-z0-9-]{1,64})$/u.exec(req.url ?? '')?.[1];
  const declared = Number(req.headers['content-length']);
  if (req.method !== 'PUT' || name === undefined || !Number.isSafeInteger(declared)) {
    req.resume();
    answer(res, 400, { error: 'PUT /upload/NAME with Content-Length' });
    return;
  }
  const part = join(dir, `${name}.part`);
  const hash = createHash('sha256');
  let received = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      hash.update(chunk);
      done(null, chunk);
    },
  });
  void (async () => {
    try {
      await pipeline(req, tap, createWriteStream(part, { flush: true }));
      if (received !== declared) throw new Error(`received ${received} bytes, declared ${declared}`);
      await rename(part, join(dir, name));
      const handle = await open(dir, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      answer(res, 200, { data: { size_bytes: received, sha256: hash.digest('hex') } });
    } catch (error) {
      await rm(part, { force: true });
      if (!res.headersSent) answer(res, 400, { error: (error as Error).message });
    }
  })();
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
