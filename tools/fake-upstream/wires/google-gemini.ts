import { openaiCeilingRefusal, type FakeWire, type WireRefusal, type WireRequest, type WireContext } from './wire.js';

/**
 * Gemini's `.../models/{model}:generateContent` or `:streamGenerateContent`, on the Gemini API or
 * on Vertex AI (`/v1/projects/{p}/locations/{l}/publishers/google/models/...`). The model is one
 * escaped path segment, so scenario names (`script:google-gemini/stream-text`) fit.
 */
export const googleGemini: FakeWire = {
  protocol: 'google-gemini',
  generatedAs: 'google-gemini',
  match(pathname) {
    const m = /\/models\/([^/]+):(generateContent|streamGenerateContent)$/.exec(pathname);
    if (!m) return undefined;
    const model = decodeURIComponent(m[1]);
    const stream = m[2] === 'streamGenerateContent';
    return {
      view(body) {
        const config = isObject(body.generationConfig) ? body.generationConfig : {};
        return { ...body, model, stream, ...(typeof config.maxOutputTokens === 'number' ? { max_tokens: config.maxOutputTokens } : {}) };
      },
    };
  },
  authenticate: refuseWithoutVertexToken,
  errorBody: googleErrorBody,
  errorHeaders: () => ({}),
  ceilingRefusal: openaiCeilingRefusal,
  malformedEvent: () => 'data: {"candidates": [{"content": {"parts": [{"text":\r\n\r\n',
  contentType: 'text/event-stream',
};

/** Google's canonical status names, for error bodies. */
const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

export function googleErrorBody(status: number, message?: string): Record<string, unknown> {
  return { error: { code: status, message: message ?? `fake upstream error ${status}`, status: GOOGLE_STATUS[status] ?? 'UNKNOWN' } };
}

/**
 * A Vertex AI route (`.../projects/{p}/locations/{l}/publishers/...`) takes only a bearer token the
 * fake's token endpoint issued (oauth.ts) and answers Google's 401 otherwise; other routes pass.
 */
export function refuseWithoutVertexToken(req: WireRequest, ctx: WireContext): WireRefusal | undefined {
  if (!/\/projects\/[^/]+\/locations\/[^/]+\/publishers\//.test(req.pathname)) return undefined;
  if (ctx.oauth.admits(req.headers.authorization)) return undefined;
  const message = 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.';
  return { status: 401, body: googleErrorBody(401, message) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
