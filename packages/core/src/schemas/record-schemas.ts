import { columnValuesSchema, entitySchema, IDENTIFIER_PATTERN, MAX_WRITE_PARAMETERS } from './common.js';

/**
 * Body of `POST /api/v1/connections/{connection_id}/records`.
 * Source: docs/api-spec.md (entity and values required); docs/CONTRACT.md "Row writes" (unknown
 * members refused).
 */
export const insertRecordBodySchema = {
  $id: 'InsertRecordRequest',
  title: 'InsertRecordRequest',
  type: 'object',
  additionalProperties: false,
  required: ['entity', 'values'],
  properties: {
    entity: entitySchema,
    values: columnValuesSchema,
  },
} as const;

/**
 * Body of `PATCH /api/v1/connections/{connection_id}/records`.
 * Source: docs/api-spec.md; docs/CONTRACT.md "Row writes" (all four members required, `key_value`
 * a string, number or boolean).
 */
export const updateRecordBodySchema = {
  $id: 'UpdateRecordRequest',
  title: 'UpdateRecordRequest',
  type: 'object',
  additionalProperties: false,
  required: ['entity', 'key_column', 'key_value', 'values'],
  properties: {
    entity: entitySchema,
    key_column: {
      type: 'string',
      pattern: IDENTIFIER_PATTERN,
      description: 'Column that selects the row; identifier rules as for `entity` parts.',
      examples: ['id'],
    },
    key_value: {
      type: ['string', 'number', 'boolean'],
      description:
        'Value of the key of the row to update; null is not allowed. A number is bound exactly (an integer within bigint, or a decimal of at most 38 digits) or refused with `invalid_value`.',
      examples: [42],
    },
    // key_value is one more parameter of the statement (docs/CONTRACT.md "Exact values").
    values: { ...columnValuesSchema, maxProperties: MAX_WRITE_PARAMETERS - 1 },
  },
} as const;
