import { expect } from 'chai';
import { FanOutNotifier, type Notifier, type RunChange } from '@svc/core';
import { aRun, RecordingLogger } from '@svc/core/testing';

const change: RunChange = { type: 'run.queued', at: new Date('2026-11-25T00:00:00Z'), run: aRun({ runId: 'fan-out-1' }) };

function finalOnly(): Notifier {
  return { runFinished: () => Promise.resolve() };
}

describe('FanOutNotifier.runChanged', function () {
  it('tells the one notifier that takes changes, and resolves once it has', async function () {
    const told: string[] = [];
    let release: () => void = () => undefined;
    const notifier = new FanOutNotifier([
      finalOnly(),
      {
        runFinished: () => Promise.resolve(),
        runChanged: (c) => {
          told.push(c.run.runId);
          return new Promise<void>((resolve) => (release = resolve));
        },
      },
    ]);
    let settled = false;
    const pending = notifier.runChanged(change).then(() => (settled = true));
    expect(told).to.deep.equal(['fan-out-1']);
    await Promise.resolve();
    expect(settled).to.equal(false);
    release();
    await pending;
    expect(settled).to.equal(true);
  });

  it('never rejects: a lone notifier that rejects or throws is logged with its index and error type only', async function () {
    const logger = new RecordingLogger();
    const rejecting = new FanOutNotifier([finalOnly(), { runFinished: () => Promise.resolve(), runChanged: () => Promise.reject(new TypeError('secret detail')) }], logger);
    await rejecting.runChanged(change);
    const throwing = new FanOutNotifier(
      [
        {
          runFinished: () => Promise.resolve(),
          runChanged: () => {
            throw new RangeError('secret detail');
          },
        },
      ],
      logger,
    );
    await throwing.runChanged(change);
    expect(logger.at('warn').map((l) => l.fields)).to.deep.equal([
      { run_id: 'fan-out-1', event_type: 'run.queued', notifier: 1, error_type: 'TypeError' },
      { run_id: 'fan-out-1', event_type: 'run.queued', notifier: 0, error_type: 'RangeError' },
    ]);
    expect(logger.text()).not.to.include('secret detail');
  });

  it('tells several, and one that rejects does not keep the others from being told', async function () {
    const logger = new RecordingLogger();
    const told: number[] = [];
    const notifier = new FanOutNotifier(
      [
        { runFinished: () => Promise.resolve(), runChanged: () => Promise.reject(new Error('down')) },
        {
          runFinished: () => Promise.resolve(),
          runChanged: () => {
            told.push(1);
            return Promise.resolve();
          },
        },
      ],
      logger,
    );
    await notifier.runChanged(change);
    expect(told).to.deep.equal([1]);
    expect(logger.at('warn').map((l) => l.fields['notifier'])).to.deep.equal([0]);
  });

  it('resolves at once when no notifier takes changes', async function () {
    await new FanOutNotifier([finalOnly()]).runChanged(change);
  });
});
