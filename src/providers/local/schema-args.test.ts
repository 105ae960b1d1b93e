import { describe, expect, it } from 'vitest';
import { schemaValidator } from '../../../test/support/local-call.js';
import { MAX_CHARS, argsForSchema, type StringSource } from './schema-args.js';

const fixed = (...values: string[]): StringSource => {
  let i = 0;
  return { next: () => (values.length ? (values[i++ % values.length] as string) : 'example') };
};

const SCHEMAS: Record<string, Record<string, unknown>> = {
  flat: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' }, metric: { type: 'boolean' }, temp: { type: 'number' } },
    required: ['city', 'days'],
    additionalProperties: false,
  },
  ranges: {
    type: 'object',
    properties: {
      big: { type: 'integer', minimum: 10, maximum: 20 },
      small: { type: 'number', maximum: 0.25 },
      excl: { type: 'integer', exclusiveMinimum: 1, exclusiveMaximum: 3 },
      neg: { type: 'integer', maximum: -5 },
      step: { type: 'number', minimum: 7, multipleOf: 5 },
    },
    required: ['big', 'small', 'excl', 'neg', 'step'],
  },
  strings: {
    type: 'object',
    properties: {
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      code: { type: 'string', minLength: 12, maxLength: 14 },
      short: { type: 'string', maxLength: 2 },
      when: { type: 'string', format: 'date-time' },
      mail: { type: 'string', format: 'email' },
      fixed: { const: 'v1' },
    },
    required: ['unit', 'code', 'short', 'when', 'mail', 'fixed'],
  },
  nested: {
    type: 'object',
    properties: {
      filters: {
        type: 'array',
        minItems: 2,
        items: { type: 'object', properties: { field: { type: 'string' }, op: { enum: ['eq', 'ne'] } }, required: ['field', 'op'] },
      },
      tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
      pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] },
      meta: { type: 'object', properties: { deep: { type: 'object', properties: { x: { type: 'null' } } } } },
    },
    required: ['filters', 'meta'],
  },
  unions: {
    type: 'object',
    properties: {
      maybe: { type: ['null', 'string'] },
      either: { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 4 }] },
      one: { oneOf: [{ type: 'boolean' }, { type: 'string' }] },
      all: { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'integer' } }, required: ['b'] }] },
    },
    required: ['maybe', 'either', 'one', 'all'],
  },
  requiredWithoutProperty: { type: 'object', required: ['q'] },
  empty: { type: 'object', properties: {} },
};

describe('argsForSchema', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`produces arguments valid against the "${name}" schema`, () => {
      const args = argsForSchema(schema, fixed('Paris', 'Tokyo'));
      expect(schemaValidator(schema)(args)).toBe(true);
    });
  }

  it('fills every property and takes strings from the source in order', () => {
    const args = argsForSchema(SCHEMAS.flat as Record<string, unknown>, fixed('Paris'));
    expect(args).toEqual({ city: 'Paris', days: 1, metric: true, temp: 1 });
  });

  it('uses the first enum value and respects numeric bounds', () => {
    const args = argsForSchema(SCHEMAS.ranges as Record<string, unknown>, fixed());
    expect(args).toEqual({ big: 10, small: 0.25, excl: 2, neg: -5, step: 10 });
  });

  it('gives an empty object for a schema without properties', () => {
    expect(argsForSchema({ type: 'object' }, fixed('x'))).toEqual({});
  });

  it.each([
    ['huge strings in a huge array', { a: { type: 'array', minItems: 40_000, items: { type: 'string', minLength: 100_000 } } }],
    ['nested arrays', { a: { type: 'array', minItems: 500, items: { type: 'array', minItems: 500, items: { type: 'array', minItems: 500, items: { type: 'string' } } } } }],
    ['lengths past what a string or an array can hold', { a: { type: 'string', minLength: 2_000_000_000 }, b: { type: 'array', minItems: 5_000_000_000 } }],
  ])('bounds what a client schema can ask for: %s', (_name, properties) => {
    const text = JSON.stringify(argsForSchema({ type: 'object', properties }, fixed('x')));
    expect(text.length).toBeLessThan(MAX_CHARS * 1.5);
    expect(text.length).toBeGreaterThan(100);
  });
});
