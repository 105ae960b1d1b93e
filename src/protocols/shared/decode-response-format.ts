import { invalid } from '../../ir/errors.js';
import type { ResponseFormat } from '../../ir/request.js';
import { isRecord, type JsonObject } from './json.js';

/** OpenAI's rule for a format's name; Anthropic has no name, and gets this one. */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const DEFAULT_NAME = 'response';

/**
 * Chat `response_format`: `{type: "text" | "json_object" | "json_schema", json_schema?: {name,
 * schema, description, strict}}`. `text` is the default, so it decodes to no format.
 */
export function decodeChatResponseFormat(v: unknown): ResponseFormat | undefined {
  const param = 'response_format';
  const f = formatObject(v, param);
  if (!f) return undefined;
  if (f.type !== 'json_schema') return simpleFormat(f.type, param);
  if (!isRecord(f.json_schema)) throw invalid('response_format.json_schema must be an object {name, schema}', `${param}.json_schema`);
  return schemaFormat(f.json_schema, `${param}.json_schema`, true);
}

/** Responses `text.format`: the same choices, with the schema's fields beside `type`. */
export function decodeResponsesTextFormat(text: unknown): ResponseFormat | undefined {
  if (text === undefined || text === null) return undefined;
  if (!isRecord(text)) throw invalid('text must be an object', 'text');
  const param = 'text.format';
  const f = formatObject(text.format, param);
  if (!f) return undefined;
  return f.type === 'json_schema' ? schemaFormat(f, param, true) : simpleFormat(f.type, param);
}

/** Messages `output_config.format` (or the deprecated `output_format`): `{type: "json_schema", schema}`. */
export function decodeMessagesOutputFormat(v: unknown, param: string): ResponseFormat | undefined {
  const f = formatObject(v, param);
  if (!f) return undefined;
  if (f.type !== 'json_schema') throw invalid(`${param}.type must be "json_schema"`, `${param}.type`);
  return schemaFormat(f, param, false);
}

function formatObject(v: unknown, param: string): (JsonObject & { type: string }) | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v) || typeof v.type !== 'string') throw invalid(`${param} must be an object with a type`, param);
  return v as JsonObject & { type: string };
}

function simpleFormat(type: string, param: string): ResponseFormat | undefined {
  if (type === 'text') return undefined;
  if (type === 'json_object') return { type: 'json_object' };
  throw invalid(`${param}.type must be text, json_object or json_schema (got ${JSON.stringify(type)})`, `${param}.type`);
}

function schemaFormat(f: JsonObject, param: string, nameRequired: boolean): ResponseFormat {
  if (f.schema !== undefined && !isRecord(f.schema)) throw invalid(`${param}.schema must be a JSON schema object`, `${param}.schema`);
  if (nameRequired && f.name === undefined) throw invalid(`${param}.name is required`, `${param}.name`);
  if (f.name !== undefined && (typeof f.name !== 'string' || !NAME.test(f.name))) {
    throw invalid(`${param}.name must be 1-64 letters, digits, underscores or dashes`, `${param}.name`);
  }
  return {
    type: 'json_schema',
    name: (f.name as string | undefined) ?? DEFAULT_NAME,
    schema: (f.schema as JsonObject | undefined) ?? { type: 'object' },
    ...(typeof f.description === 'string' ? { description: f.description } : {}),
    ...(typeof f.strict === 'boolean' ? { strict: f.strict } : {}),
  };
}
