import { MAX_BACKGROUND_FILES_PER_RUN, MAX_FILES_PER_RUN } from '../domain/run-request.js';
import { fileReferenceSchema, MAX_MESSAGE_LENGTH } from './common.js';

/**
 * Option 1 of the run request body: files, with optional message, notification address
 * and background files. Source: docs/CONTRACT.md "Runs"; docs/api-spec.md "Limits".
 */
export const filesRunBodySchema = {
  $id: 'RunWithFiles',
  title: 'RunWithFiles',
  description: 'Option 1: uploaded files, with an optional instruction.',
  type: 'object',
  additionalProperties: false,
  required: ['files'],
  properties: {
    files: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_FILES_PER_RUN,
      items: fileReferenceSchema,
      description: `Foreground files the agent reads: 1 to ${MAX_FILES_PER_RUN}.`,
    },
    message: { type: 'string', maxLength: MAX_MESSAGE_LENGTH, description: 'Instruction or text input for the agent.' },
    process_together: {
      type: 'boolean',
      default: false,
      description: 'Process the foreground files in one agent conversation.',
    },
    notification_email: {
      type: 'string',
      format: 'email',
      maxLength: 254,
      description: 'E-mail address to notify when processing finishes.',
    },
    background_files: {
      type: 'array',
      maxItems: MAX_BACKGROUND_FILES_PER_RUN,
      items: fileReferenceSchema,
      description: `Files available to tools but not read directly by the agent: at most ${MAX_BACKGROUND_FILES_PER_RUN}.`,
    },
  },
} as const;

/**
 * Option 2 of the run request body: a message only. Source: docs/CONTRACT.md "Runs".
 */
export const messageRunBodySchema = {
  $id: 'RunWithMessage',
  title: 'RunWithMessage',
  description: 'Option 2: a user message only (no files, notification address or background files).',
  type: 'object',
  additionalProperties: false,
  required: ['message'],
  properties: {
    message: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_MESSAGE_LENGTH,
      description: 'Instruction or text input for the agent; not empty.',
    },
  },
} as const;

/**
 * The run request body as documented: exactly one of the two options. Validation picks
 * the option by the presence of `files` (see `validateStartRunBody`), so that errors
 * name the field instead of "must match exactly one schema".
 */
export const startRunBodySchema = {
  $id: 'StartRunRequest',
  title: 'StartRunRequest',
  oneOf: [{ $ref: 'RunWithFiles' }, { $ref: 'RunWithMessage' }],
} as const;
