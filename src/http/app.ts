import { timingSafeEqual } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import { GatewayError, toGatewayError } from '../ir/index.js';
import type { CompletionReport, HandlerInput, HandlerResult } from '../handlers/types.js';
import type { Actor, KeyAuth } from '../ledger/index.js';
import { requestLogLine, requestSpanAttributes } from './request-log.js';
import type { RequestTrace, Telemetry } from '../telemetry/types.js';
import type { Logger } from '../pipeline/types.js';
import type { ProtocolAdapter } from '../protocols/types.js';
import type { ApiDocument } from './openapi-document.js';
import { protocolForPath, routeTable, type RouteDeps, type RouteSpec } from './routes.js';
import { DEFAULT_BODY_ARRIVAL, withinArrival, type BodyArrival } from './body-arrival.js';
import { writeFrames } from './sse-writer.js';
import { ByteBudget } from './byte-budget.js';
import type { Lifecycle } from './lifecycle.js';
import { redactor } from '../util/redact.js';
import { newRequestId } from './request-id.js';
import type { Catalog } from '../routing/catalog.js';
import * as metrics from '../util/metrics.js';
import { DatabaseDeadline, isDatabaseUnavailable, REQUEST_DB_WAIT_MS } from '../ledger/index.js';
import { withinDeadline } from '../util/deadline.js';
import { consoleMiddleware, type ConsoleCaller } from './console/serve-console.js';
import type { SessionStore } from './console/sessions.js';
import type { IdentityInUse } from './identity/identity-in-use.js';
import { looksLikeJwt } from './identity/verify-token.js';
import { resolvePrincipal } from './identity/resolve-principal.js';

export interface AppOptions extends RouteDeps {
  api: ApiDocument;
  /** Bearer token of the admin API; the admin API is closed when unset. */
  adminKey?: string;
  /** Largest accepted request body, in bytes. */
  bodyLimitBytes: number;
  /** Bytes of request bodies read at once, all requests together (default 64 MiB). */
  bodyBudgetBytes?: number;
  /** How long a body waits for its share of the budget before the request is refused with a 503 (default 10 s). */
  bodyBudgetWaitMs?: number;
  /** How fast a body must arrive before it is cut with a 408 (see body-arrival.ts). */
  bodyArrival?: BodyArrival;
  /** How long a streaming client may leave its buffer full before it is cut off (see sse-writer.ts). */
  sendTimeoutMs?: number;
  log: Logger;
  /** Where the one line per request goes (default: log). */
  requestLog?: Logger;
  /** Requests in flight and draining (see start-gateway.ts's close). */
  lifecycle: Lifecycle;
  /** GET /readyz: whether this instance should get traffic (database, Redis, not draining). */
  readiness?: () => Promise<Readiness>;
  /** Bearer token that GET /metrics requires; open when unset. */
  metricsToken?: string;
  /** The web console's sessions (a fresh in-memory store when absent). */
  consoleSessions?: SessionStore;
  /** Checks identity-provider tokens (SWITCHYARD_OIDC_ISSUER / `oidc:`) and signs the console in with them; only API keys pass when absent or unset. */
  identity?: IdentityInUse;
  /** OpenTelemetry export (absent when no OTEL_* variable asks for it). */
  telemetry?: Telemetry;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
}

interface State {
  requestId: string;
  /** The authenticated caller, for the request log. */
  auth?: KeyAuth;
  /** What a completion reports for the request log. */
  completion: CompletionReport;
  /** Removes the provider keys and the caller's key from what is sent back (see redact.ts). */
  redact?: (text: string) => string;
  protocol: ProtocolAdapter<any>;
  /** The matched operation, for metrics ('unrouted' when none matched). */
  operationId?: string;
  /** A call the console makes for its signed-in session (serve-console.ts). */
  console?: ConsoleCaller;
  /** The request's trace, when telemetry is on. */
  trace?: RequestTrace;
  /** The kind of error the request was answered with, for its span. */
  errorType?: string;
}

export const DEFAULT_BODY_BUDGET_BYTES = 64 * 1024 * 1024;
const BODY_BUDGET_WAIT_MS = 10_000;

/** Health probes, answered before routing (they are the orchestrator's, not the API's). */
const PROBES = new Set(['/healthz', '/readyz']);

/** Where Codex asks for a WebSocket (Responses over WebSocket), answered 426. */
const RESPONSES_PATH = '/v1/responses';

const VERSION_HEADER = /^\d{4}-\d{2}-\d{2}$/;
/** JSON.parse accepts any depth, but JSON.stringify (the upstream request) overflows the stack near 10k. */
const MAX_JSON_DEPTH = 512;

/** Iterative, so the check itself cannot overflow. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * The Koa app: request ids, error rendering in the caller's protocol (in one place), body
 * parsing, routing from the OpenAPI document, validation, authentication, then the handler.
 */
export function createApp(opts: AppOptions): Koa<State> {
  const app = new Koa<State>();
  const router = new Router<State>();
  const table = routeTable(opts);
  const requestLog = opts.requestLog ?? opts.log;

  app.use(async (ctx, next) => {
    ctx.state.requestId = newRequestId();
    ctx.state.protocol = protocolForPath(ctx.path, ctx.headers as Record<string, string | undefined>);
    ctx.set('x-request-id', ctx.state.requestId);
    const ownRequestId = ctx.state.protocol.requestIdHeader;
    if (ownRequestId) ctx.set(ownRequestId, ctx.state.requestId);
    const endTimer = metrics.httpDuration.startTimer();
    const started = performance.now();
    ctx.state.completion = {};
    // Probes come every few seconds: no trace for them.
    const trace = PROBES.has(ctx.path) ? undefined : opts.telemetry?.request(ctx.method, ctx.headers);
    ctx.state.trace = trace;
    opts.lifecycle.enter();
    try {
      if (opts.lifecycle.draining) {
        // A request on a connection kept alive from before the drain: the next one goes elsewhere.
        ctx.set('connection', 'close');
        throw new GatewayError('unavailable', 'the gateway is shutting down; retry', { retryAfter: 1 });
      }
      await next();
      if (ctx.body == null && ctx.respond !== false) unrouted(ctx);
    } catch (e) {
      const err = errorToAnswer(e, ctx.state.requestId);
      ctx.state.errorType = err.code ?? err.kind;
      renderError(ctx, ctx.state.protocol, err, opts.log);
    } finally {
      opts.lifecycle.leave();
    }
    const operation = ctx.state.operationId ?? 'unrouted';
    const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
    endTimer({ operation });
    metrics.httpRequests.inc({ operation, status: String(status) });
    const facts = { ...ctx.state, method: ctx.method, path: ctx.path, status, latencyMs: performance.now() - started };
    const line = requestLogLine(facts);
    if (trace) endTrace(trace, facts, line, ctx.state.errorType);
    // Probes come every few seconds: their lines would drown the rest.
    if (PROBES.has(ctx.path)) requestLog.debug?.(line, 'request');
    else requestLog.info(line, 'request');
  });

  app.use(async (ctx, next) => {
    if (!PROBES.has(ctx.path) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    // Liveness: the process answers. Readiness: it can serve (database, Redis, not draining).
    const readiness = ctx.path === '/readyz' ? await (opts.readiness?.() ?? Promise.resolve({ ready: !opts.lifecycle.draining, checks: {} })) : { ready: true, checks: {} };
    ctx.status = readiness.ready ? 200 : 503;
    ctx.body = { status: readiness.ready ? 'ok' : 'unavailable', ...(ctx.path === '/readyz' ? { checks: readiness.checks } : {}) };
  });

  app.use(async (ctx, next) => {
    // Codex with `supports_websockets` opens its Responses session over WebSocket first; 426 (not 405,
    // which it retries five times) sends it to POST /v1/responses at once. No WebSocket is served.
    if (ctx.method !== 'GET' || ctx.path !== RESPONSES_PATH || !/\bwebsocket\b/i.test(ctx.get('upgrade'))) return next();
    throw new GatewayError('upgrade_required', `WebSocket is not served on ${RESPONSES_PATH}: send POST ${RESPONSES_PATH} (stream: true streams the answer as server-sent events)`, { code: 'websocket_not_supported' });
  });

  const parseBody = bodyParser({
    enableTypes: ['json'],
    jsonLimit: opts.bodyLimitBytes,
    encoding: 'utf-8',
    onError: (err: any) => {
      if (err.status === 413 || err.type === 'entity.too.large') {
        throw new GatewayError('request_too_large', `the request body is larger than the limit of ${opts.bodyLimitBytes} bytes`);
      }
      if (err.status === 415 || err.type === 'encoding.unsupported') {
        throw new GatewayError('unsupported_media_type', `${err.message}: send the body as is, or gzip, deflate or br`);
      }
      throw new GatewayError('invalid_request', `the request body is not valid JSON: ${err.message}`);
    },
  });
  const budget = new ByteBudget(opts.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES);
  /** Reads and parses the body within the budget; called only once the caller is authenticated. */
  const readBody = async (ctx: Koa.ParameterizedContext<State>) => {
    // Shared fairly: per key, or per connection for a caller without one.
    const owner = ctx.state.auth?.keyId ?? `connection:${ctx.req.socket.remoteAddress}:${ctx.req.socket.remotePort}`;
    const release = await budget.reserve(ctx.request.length ?? opts.bodyLimitBytes, opts.bodyBudgetWaitMs ?? BODY_BUDGET_WAIT_MS, owner);
    if (!release) throw new GatewayError('unavailable', 'too many request bodies are being read at once; retry shortly', { retryAfter: 1 });
    try {
      await withinArrival(ctx.req.socket, opts.bodyArrival ?? DEFAULT_BODY_ARRIVAL, parseBody(ctx as any, async () => undefined));
    } finally {
      release();
    }
  };

  for (const route of opts.api.routes) {
    const spec = table[route.operationId];
    if (!spec) throw new Error(`no handler for operation ${route.operationId}`);
    const method = route.method as 'get' | 'post' | 'patch' | 'delete' | 'head';
    router[method](route.path, async (ctx) => {
      ctx.state.protocol = spec.protocolFor?.(ctx.headers as Record<string, string | undefined>) ?? spec.protocol;
      ctx.state.operationId = route.operationId;
      ctx.state.trace?.route(route.path);
      ctx.state.redact = redactor([...providerKeys(opts.pipeline.catalog), presentedKey(ctx.headers as Record<string, string | undefined>)]);
      const { input, clientGone } = await prepareInput(ctx, route.operationId, spec, opts, readBody);
      await respond(ctx, await spec.handler(input), clientGone, opts.sendTimeoutMs);
    });
  }
  // The console's API calls are handed on to these same routes with the session's credential.
  app.use(consoleMiddleware({ ledger: opts.ledger, adminKey: opts.adminKey, sessions: opts.consoleSessions, readBody: (ctx) => readBody(ctx as any), sso: () => opts.identity?.sso }));
  app.use(router.routes());
  // Answers 405 (and 501) with an `Allow` header and no body; `unrouted` renders the body.
  app.use(router.allowedMethods());
  return app;
}

/** Ends the request's span: its attributes, its status; the log line joins the trace (and is exported when logs are). */
function endTrace(trace: RequestTrace, facts: Parameters<typeof requestLogLine>[0], line: Record<string, unknown>, errorType: string | undefined): void {
  line.trace_id = trace.traceId;
  line.span_id = trace.spanId;
  trace.set(requestSpanAttributes(facts));
  const { model, run } = facts.completion;
  trace.finish(facts.status, {
    operation: model !== undefined ? 'chat' : undefined,
    provider: 'switchyard',
    requestModel: model,
    responseModel: run?.servedModel,
    errorType,
    outputTokens: run?.usage?.output.total,
  });
  trace.log(line);
}

/** A request no route answered: 404, or 405 with the router's `Allow` header kept. */
function unrouted(ctx: Koa.ParameterizedContext<State>): void {
  if (ctx.status === 404) throw new GatewayError('not_found', `no route for ${ctx.method} ${ctx.path}`);
  if (ctx.status === 405 || ctx.status === 501) {
    throw new GatewayError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path} (allowed: ${ctx.response.get('allow')})`);
  }
}

async function prepareInput(
  ctx: Koa.ParameterizedContext<State>,
  operationId: string,
  spec: RouteSpec,
  opts: AppOptions,
  readBody: (ctx: Koa.ParameterizedContext<State>) => Promise<void>,
): Promise<{ input: HandlerInput; clientGone: AbortSignal }> {
  const headers = ctx.headers as Record<string, string | undefined>;
  const hasBody = ctx.method === 'POST' || ctx.method === 'PATCH';
  // Checked early (before auth) on the routes of a protocol that has version headers; elsewhere an
  // operation that declares the header has it validated by the document, and one that does not
  // (HEAD /) ignores it.
  for (const name of spec.protocol.versionHeaders ?? []) {
    const v = headers[name];
    if (v !== undefined && !VERSION_HEADER.test(v)) throw new GatewayError('invalid_request', `${name}: must be a date like 2023-06-01`, { param: name });
  }
  // From the headers alone, before a byte of the body is read: a stranger's 30 MB costs nothing.
  const auth = await authenticate(spec.auth, headers, opts, ctx.state.console);
  ctx.state.auth = auth;
  const actor = spec.auth === 'admin' ? actorOf(ctx.state.console) : undefined;
  // The body's type, like the body, is the business of an authenticated caller only.
  if (hasBody && ctx.request.length !== 0 && !ctx.is('application/json')) {
    throw new GatewayError('unsupported_media_type', `content-type must be application/json, got ${headers['content-type'] ?? 'none'}`);
  }
  if (hasBody) await readBody(ctx);
  const body = (ctx.request as any).body;
  if (nestedDeeperThan(body, MAX_JSON_DEPTH)) throw new GatewayError('invalid_request', `the request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  const params = (ctx as any).params ?? {};
  opts.api.validate(operationId, { body: hasBody ? body : undefined, params, query: ctx.query, headers });
  // Two signals: the writer stops when the client is gone; the handler's run also stops when the
  // drain ends what is left, with the reason, which the client then receives as an error.
  const clientGone = new AbortController();
  const stop = new AbortController();
  const unlisten = opts.lifecycle.whenShutdown((reason) => stop.abort(reason));
  ctx.res.once('close', () => {
    unlisten();
    if (!ctx.res.writableFinished) {
      clientGone.abort();
      stop.abort();
    }
  });
  const input = {
    body,
    params,
    query: ctx.query as HandlerInput['query'],
    headers,
    requestId: ctx.state.requestId,
    signal: stop.signal,
    auth,
    actor,
    protocol: ctx.state.protocol,
    completion: ctx.state.completion,
    trace: ctx.state.trace,
  };
  return { input, clientGone: clientGone.signal };
}

async function authenticate(mode: RouteSpec['auth'], headers: Record<string, string | undefined>, opts: AppOptions, viaConsole?: ConsoleCaller) {
  if (mode === 'none') return undefined;
  // The console checked its session (cookie, CSRF, origin) and what the role may call.
  if (viaConsole?.operator && mode === 'admin') return undefined;
  if (viaConsole?.auth && mode === 'client') return admitUser(viaConsole.auth, opts.ledger);
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1]?.trim();
  if (mode === 'metrics') {
    if (opts.metricsToken && (!bearer || !safeEqual(bearer, opts.metricsToken))) {
      throw new GatewayError('authentication', 'GET /metrics needs Authorization: Bearer $SWITCHYARD_METRICS_TOKEN');
    }
    return undefined;
  }
  if (mode === 'admin') {
    if (!opts.adminKey) throw new GatewayError('permission', 'the admin API is disabled: set SWITCHYARD_ADMIN_KEY');
    if (!bearer || !safeEqual(bearer, opts.adminKey)) throw new GatewayError('authentication', 'invalid admin key (Authorization: Bearer $SWITCHYARD_ADMIN_KEY)');
    return undefined;
  }
  const key = bearer ?? headers['x-api-key']?.trim();
  const tokens = opts.identity?.tokens;
  if (!key) throw new GatewayError('authentication', `missing API key: send Authorization: Bearer <key> or x-api-key: <key>${tokens ? ' (an API key or your identity provider\'s token)' : ''}`);
  // A JWT is never an API key: with an identity provider configured it is checked as its token.
  if (tokens && looksLikeJwt(key)) return admitUser(resolvePrincipal(await tokens.verify(key), tokens.config, opts.pipeline.catalog), opts.ledger);
  const auth = await withinDeadline(opts.ledger.authenticate(key), REQUEST_DB_WAIT_MS, () => new DatabaseDeadline('the key lookup'));
  if (!auth) throw new GatewayError('authentication', 'invalid API key (unknown or revoked)', { code: 'invalid_api_key' });
  return auth;
}

/**
 * A token's user, recorded on first sight (under the account their organisation maps to then) and
 * refused while disabled. They are billed to the account they were first seen under.
 */
async function admitUser(auth: KeyAuth, ledger: AppOptions['ledger']): Promise<KeyAuth> {
  const record = await ledger.seeUser(auth.user!, auth.accountId);
  if (record.disabledAt) throw new GatewayError('authentication', 'invalid token: this user is disabled on this gateway', { code: 'user_disabled' });
  return record.accountId === auth.accountId ? auth : { ...auth, accountId: record.accountId };
}

/** Who an admin call acts as, for the audit log: an operator signed in through the IdP, else the admin key's holder. */
function actorOf(viaConsole: ConsoleCaller | undefined): Actor {
  const user = viaConsole?.operator?.user;
  return user ? { kind: 'user', id: user.id, name: `${user.name ?? user.subject} (${user.subject} at ${user.issuer})` } : { kind: 'admin_key' };
}

function redactText(ctx: Koa.ParameterizedContext<State>, text: string): string {
  return ctx.state.redact ? ctx.state.redact(text) : text;
}

/** The key the caller presented, whichever header carried it. */
function presentedKey(headers: Record<string, string | undefined>): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1]?.trim() ?? headers['x-api-key']?.trim();
}

/** The configured providers' keys (their api_key_env values). */
function* providerKeys(catalog: Catalog): Iterable<string | undefined> {
  for (const p of catalog.providers.values()) yield p.apiKey;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function respond(ctx: Koa.ParameterizedContext<State>, result: HandlerResult, signal: AbortSignal, sendTimeoutMs?: number): Promise<void> {
  if (result.kind === 'sse') {
    try {
      return await respondStream(ctx, result, signal, sendTimeoutMs);
    } finally {
      await result.close();
    }
  }
  for (const [k, v] of Object.entries(result.headers ?? {})) ctx.set(k, v);
  if (result.kind === 'json') {
    ctx.status = result.status;
    // Stringified here (Koa would do it anyway) so the text can be cleared of credentials.
    ctx.type = 'application/json';
    ctx.body = redactText(ctx, JSON.stringify(result.body));
    return;
  }
  if (result.kind === 'text') {
    ctx.status = result.status;
    ctx.type = result.contentType;
    ctx.body = result.body;
    return;
  }
  ctx.status = result.status;
  ctx.body = '';
}

async function respondStream(
  ctx: Koa.ParameterizedContext<State>,
  result: Extract<HandlerResult, { kind: 'sse' }>,
  signal: AbortSignal,
  sendTimeoutMs?: number,
): Promise<void> {
  for (const [k, v] of Object.entries(result.headers ?? {})) ctx.set(k, v);
  ctx.respond = false;
  const res = ctx.res;
  res.writeHead(200, {
    ...Object.fromEntries(Object.entries(ctx.response.headers).map(([k, v]) => [k, String(v)])),
    'content-type': ctx.state.protocol.framing?.contentType ?? 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  // No flushHeaders(): the first event is already at hand, and the headers leave with its frames.
  ctx.req.socket.setNoDelay(true);
  try {
    await writeFrames(res, result.frames, signal, { sendTimeoutMs, redact: ctx.state.redact, format: ctx.state.protocol.framing?.frame });
  } finally {
    if (!res.writableEnded) res.end();
  }
}

/** How long a client is told to wait when the database is away (it usually returns within seconds). */
const DATABASE_RETRY_AFTER_S = 2;

/** A database that cannot be reached is a 503 to retry, not an internal error; anything else unknown is a 500. */
function errorToAnswer(e: unknown, requestId: string): GatewayError {
  if (isDatabaseUnavailable(e)) {
    return new GatewayError('unavailable', `the service is temporarily unavailable (request ${requestId}); retry shortly`, { retryAfter: DATABASE_RETRY_AFTER_S, cause: e });
  }
  return toGatewayError(e, requestId);
}

function renderError(ctx: Koa.ParameterizedContext<State>, protocol: ProtocolAdapter<any>, err: GatewayError, log: Logger): void {
  // Unavailable is a state of the service (database away, draining, bodies over budget), not a bug: no stack.
  if (err.kind === 'unavailable') log.warn({ requestId: ctx.state.requestId, reason: err.message, cause: err.cause ? causeSummary(err.cause) : undefined }, 'request refused: unavailable');
  else if (err.status >= 500) log.error({ err, cause: (err as any).cause, requestId: ctx.state.requestId }, 'request failed');
  if (ctx.respond === false || ctx.headerSent) return;
  // A body left unread (refused before reading it) would otherwise be received and thrown away
  // to keep the connection: closing it is cheaper for both sides.
  if (!ctx.req.complete) ctx.set('connection', 'close');
  const rendered = protocol.encodeError(err, ctx.state.requestId);
  ctx.status = rendered.status;
  for (const [k, v] of Object.entries(rendered.headers)) ctx.set(k, v);
  if (err.rateLimit) {
    for (const [k, v] of Object.entries(protocol.rateLimitHeaders(err.rateLimit, Date.now()))) ctx.set(k, v);
    // A 429 without a time to wait (a request larger than the limit) will not pass by retrying:
    // both SDK families read this header and do not retry.
    if (err.retryAfter === undefined) ctx.set('x-should-retry', 'false');
  }
  ctx.type = 'application/json';
  ctx.body = redactText(ctx, JSON.stringify(rendered.body));
}

/** The part of a database error worth a log line (its stack is always the driver's). */
function causeSummary(e: unknown): { message: string; code?: string } {
  const err = e as { message?: string; code?: string };
  return { message: String(err?.message ?? e), code: err?.code };
}
