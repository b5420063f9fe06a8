/**
 * An agent that runs can be started for.
 * Source: docs/api-spec.md "Agent"; docs/CONTRACT.md "Authentication" (belongs to one account).
 */
export interface Agent {
  /** Identifier used in `POST /api/v1/agents/{agent_id}/run`. */
  readonly agentId: string;
  /** Account that owns it; other accounts see 404. */
  readonly accountId: string;
  /** Human-readable name, optional. */
  readonly name?: string;
  /** What the agent does, in words, optional (shown by discovery, `GET /api/v1/agents`). */
  readonly description?: string;
  /** When it was added to the catalog; absent when the catalog does not know (a configuration file). */
  readonly createdAt?: Date;
}
