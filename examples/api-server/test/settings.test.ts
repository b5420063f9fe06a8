import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ConfigError, loadSettings } from '../src/settings.js';

const EXAMPLE = fileURLToPath(new URL('../config.example.yaml', import.meta.url));

describe('settings', function () {
  it('config.example.yaml, which documents every field, validates', function () {
    const settings = loadSettings(EXAMPLE, {});
    expect(settings.durability).to.deep.equal({ redisRequireDurable: false, runRetentionSeconds: 604_800, maxFinishedRunsInMemory: 10_000 });
  });

  it('a bad runs or redis field is refused naming it', function () {
    expect(() => validate({ runs: { retention_seconds: 5 } })).to.throw(ConfigError, /runs\.retention_seconds/u);
    expect(() => validate({ redis: { require_durable: 'yes' } })).to.throw(ConfigError, /redis\.require_durable/u);
  });
});

/** Loads `raw` as a configuration file (JSON is YAML), as the server does. */
function validate(raw: unknown): void {
  const dir = mkdtempSync(join(tmpdir(), 'svc-settings-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, JSON.stringify(raw));
  try {
    loadSettings(path, {});
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
