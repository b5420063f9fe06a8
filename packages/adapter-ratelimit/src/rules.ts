/**
 * A rule's limit divided among `instanceCount` instances: `ceil(limit / instanceCount)`,
 * at least 1. Used by the insurance store while Redis is unreachable, so that the
 * instances together allow about the shared limit (docs/CONTRACT.md "Rate limits": limits
 * hold across every instance).
 */
export function shareOfLimit(limit: number, instanceCount: number): number {
  return Math.max(1, Math.ceil(limit / instanceCount));
}
