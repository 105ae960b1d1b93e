import { AJV_OPTIONS, forValidation } from '../src/http/openapi-document.js';
// Test helper: the generated document loaded exactly as the server loads it.
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, ValidationContext } from 'openapi-backend';
import { parse } from 'yaml';

export const DOC_PATH = new URL('../generated/openapi.yaml', import.meta.url);

export function readDocument(): Record<string, any> {
  return parse(readFileSync(DOC_PATH, 'utf8')) as Record<string, any>;
}

export async function loadApi(): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: forValidation(readDocument()) as any,
    strict: true,
    quick: false,
    ajvOpts: AJV_OPTIONS as any,
  });
  await api.init();
  return api;
}

export type SchemaCheck = (value: unknown) => string[];

/** Compiles a dereferenced component schema (for SSE payloads, which no operation references). */
export function compileComponent(api: OpenAPIBackend, name: string): SchemaCheck {
  const schema = (api.definition as any).components.schemas[name];
  if (!schema) throw new Error(`no component schema ${name}`);
  const validate = api.validator.getAjv(ValidationContext.Response).compile(schema);
  return (value) =>
    validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

export interface SampleRequest {
  path: string;
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

/** Validates a request; returns AJV errors or []. */
export function check(api: OpenAPIBackend, req: SampleRequest): { instancePath: string; message?: string }[] {
  const result = api.validateRequest({
    method: req.method ?? 'post',
    path: req.path,
    body: req.body,
    headers: { 'content-type': 'application/json', ...(req.headers ?? {}) },
    query: req.query ?? {},
  });
  return (result.errors ?? []) as { instancePath: string; message?: string }[];
}
