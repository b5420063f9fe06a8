import { randomUUID } from 'node:crypto';
import type { IdGenerator } from '../ports/id-generator.js';

/** UUID v4 identifiers from the platform's CSPRNG. */
export class RandomIdGenerator implements IdGenerator {
  newId(): string {
    return randomUUID();
  }
}

/** Predictable UUID-shaped identifiers `00000000-0000-4000-8000-000000000001`, … for tests. */
export class SequentialIdGenerator implements IdGenerator {
  private next = 1;

  newId(): string {
    const n = (this.next++).toString(16).padStart(12, '0');
    return `00000000-0000-4000-8000-${n}`;
  }
}
