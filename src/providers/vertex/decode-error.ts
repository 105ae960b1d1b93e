import { GatewayError, type UpstreamEvent, type StreamTranslator } from '../../ir/index.js';
import type { SseEvent } from '../../util/sse-parse.js';
import { decodeError as decodeAnthropicError } from '../anthropic/decode-error.js';
import { decodeError as decodeGoogleError } from '../gemini/decode-error.js';
import { isObject } from '../shared/read-json.js';
import type { ErrorAnswer } from '../transport/types.js';

/**
 * A Vertex failure answer -> GatewayError, for both publishers. Vertex itself (auth, quota,
 * routing) answers in Google's `{error:{code,message,status}}`; what Anthropic's model server
 * refuses comes in Anthropic's `{type:"error",error:{type,message}}`. Each shape goes to the
 * decoder of its own family (429 `RESOURCE_EXHAUSTED` retryable, `retry-after` or `RetryInfo`
 * kept), and the error names the Vertex kind it came through.
 */
export function vertexErrorDecoder(kind: string): (answer: ErrorAnswer) => GatewayError {
  return (answer) => {
    const body = Array.isArray(answer.body) && answer.body.length === 1 ? answer.body[0] : answer.body;
    const anthropicShape = isObject(body) && isObject(body.error) && typeof body.error.type === 'string' && body.error.status === undefined;
    const err = anthropicShape ? decodeAnthropicError({ ...answer, body }) : decodeGoogleError({ ...answer, body });
    return restamp(err, kind);
  };
}

/** A stream decoder of another folder, whose in-stream errors name the Vertex kind. */
export function restampErrors<S>(t: StreamTranslator<S, SseEvent, UpstreamEvent>, kind: string): StreamTranslator<S, SseEvent, UpstreamEvent> {
  return {
    step(state, ev) {
      try {
        return t.step(state, ev);
      } catch (e) {
        throw e instanceof GatewayError ? restamp(e, kind) : e;
      }
    },
    end(state) {
      try {
        return t.end?.(state) ?? [];
      } catch (e) {
        throw e instanceof GatewayError ? restamp(e, kind) : e;
      }
    },
  };
}

function restamp(e: GatewayError, kind: string): GatewayError {
  const upstream = isObject(e.details?.upstream) ? e.details.upstream : undefined;
  if (!upstream) return e;
  return new GatewayError(e.kind, e.message, {
    status: e.status,
    ...(e.code !== undefined ? { code: e.code } : {}),
    ...(e.param !== undefined ? { param: e.param } : {}),
    retryable: e.retryable,
    ...(e.retryAfter !== undefined ? { retryAfter: e.retryAfter } : {}),
    details: { ...e.details, upstream: { ...upstream, provider: kind } },
    cause: e.cause,
  });
}
