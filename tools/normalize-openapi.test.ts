import { describe, expect, it } from 'vitest';
import { forValidation } from '../src/http/openapi-document.js';
import { normalizeOpenApi, renderYaml } from './normalize-openapi.js';

describe('normalizeOpenApi', () => {
  it('turns unevaluatedProperties into additionalProperties', () => {
    const out = normalizeOpenApi({ a: { type: 'object', properties: {}, unevaluatedProperties: {} } });
    expect(out).toEqual({ a: { type: 'object', properties: {}, additionalProperties: {} } });
  });

  it('refuses unevaluatedProperties next to composition, where a rewrite changes meaning', () => {
    expect(() => normalizeOpenApi({ allOf: [], unevaluatedProperties: {} })).toThrow(/unsupported/);
  });

  it('rewrites 3.0 nullable on anyOf and on typed schemas', () => {
    expect(normalizeOpenApi({ anyOf: [{ type: 'string' }], nullable: true })).toEqual({
      anyOf: [{ type: 'string' }, { enum: [null] }],
    });
    expect(normalizeOpenApi({ type: 'integer', minimum: 1, nullable: true })).toEqual({
      anyOf: [{ type: 'integer', minimum: 1 }, { enum: [null] }],
    });
  });

  it('removes 3.1 type arrays', () => {
    expect(normalizeOpenApi({ type: ['integer', 'null'], minimum: 1 })).toEqual({
      anyOf: [{ type: 'integer', minimum: 1 }, { enum: [null] }],
    });
    expect(normalizeOpenApi({ type: ['string'] })).toEqual({ type: 'string' });
  });

  it('keeps discriminator.mapping (generators need it; only the validator copy drops it)', () => {
    const doc = { oneOf: [], discriminator: { propertyName: 'type', mapping: { a: '#/x' } } };
    expect(normalizeOpenApi(doc).discriminator).toEqual({ propertyName: 'type', mapping: { a: '#/x' } });
    expect(forValidation(doc).discriminator).toEqual({ propertyName: 'type' });
    expect(doc.discriminator.mapping).toEqual({ a: '#/x' });
  });

  it('drops explode on scalar parameters only', () => {
    const out = normalizeOpenApi([
      { name: 'limit', in: 'query', schema: { type: 'integer' }, explode: false },
      { name: 'ids', in: 'query', schema: { type: 'array', items: {} }, explode: false },
    ]);
    expect(out[0]).not.toHaveProperty('explode');
    expect(out[1]).toHaveProperty('explode', false);
  });

  it('does not modify its input and renders deterministically', () => {
    const doc = { b: { unevaluatedProperties: {} }, a: 'x'.repeat(200) };
    const first = renderYaml(normalizeOpenApi(doc));
    expect(doc.b).toHaveProperty('unevaluatedProperties');
    expect(renderYaml(normalizeOpenApi(doc))).toBe(first);
    expect(first.split('\n').length).toBe(4); // no folding of long lines
  });
});
