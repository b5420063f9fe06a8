import { expect } from 'chai';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// .ci/run runs this suite on Node 20, 22 and 24 over one `pnpm install`, made under Node 20
// (docs/decisions.md "Node versions"). Two dependencies ship native code:
// - esbuild (tsx's compiler) is a Go executable, the same on every Node; every .test.ts file,
//   this one included, is compiled by it, so a broken esbuild fails the whole run.
// - msgpackr-extract (the native half of msgpackr, BullMQ's job encoder) is a Node addon.
//   msgpackr falls back to plain JavaScript without a word when it does not load, so only
//   this test would notice. Measured: Node 20 loads its `abi115` build, Node 22 and 24 its
//   N-API build (node.napi.glibc.node), which is why one install serves all three.
describe('native code of the dependencies, on the Node.js running the suite', function () {
  it('msgpackr, as BullMQ requires it, runs with its native extractor (msgpackr-extract)', function () {
    const fromAdapterQueue = createRequire(join(process.cwd(), 'packages', 'adapter-queue', 'package.json'));
    const fromBullmq = createRequire(fromAdapterQueue.resolve('bullmq'));
    const msgpackr = fromBullmq('msgpackr') as { isNativeAccelerationEnabled?: unknown };
    expect(msgpackr.isNativeAccelerationEnabled, `Node ${process.version} (ABI ${process.versions.modules})`).to.equal(true);
  });
});
