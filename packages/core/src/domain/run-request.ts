import type { FileReference } from './file-reference.js';

/** Most foreground files in one run request. Source: docs/api-spec.md "Limits". */
export const MAX_FILES_PER_RUN = 50;
/** Most background files in one run request. Source: docs/api-spec.md "Limits". */
export const MAX_BACKGROUND_FILES_PER_RUN = 10;

/**
 * Option 1 of a run request: uploaded files, with an optional instruction.
 * Source: docs/CONTRACT.md "Runs".
 */
export interface FilesRunRequest {
  readonly kind: 'files';
  /** 1..50 foreground files the agent reads. */
  readonly files: readonly FileReference[];
  /** Instruction or text input; absent when not given. */
  readonly message?: string;
  /** Process all foreground files in one agent conversation (default false). */
  readonly processTogether: boolean;
  /** E-mail address to notify when the run finishes; absent when not given. */
  readonly notificationEmail?: string;
  /** 0..10 files available to tools but not read directly by the agent. */
  readonly backgroundFiles: readonly FileReference[];
}

/**
 * Option 2 of a run request: a user message only.
 * Source: docs/CONTRACT.md "Runs".
 */
export interface MessageRunRequest {
  readonly kind: 'message';
  /** Non-empty instruction or text input. */
  readonly message: string;
}

/**
 * What a run is started with: files (Option 1) or a message only (Option 2), never
 * both shapes. Source: docs/api-spec.md "POST /api/v1/agents/{agent_id}/run".
 */
export type RunRequest = FilesRunRequest | MessageRunRequest;
