import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { agentTurn } from './agent.js';
import type { AwsCredentials } from './bedrock.js';
import { generateEvents, generateJson } from './generate.js';
import { FakeOAuth, type OAuthOptions, type TokenRequest } from './oauth.js';
import { isScenarioString, parseScenario, type Scenario } from './scenario.js';
import { loadScript, loadTranscript } from './transcripts.js';
import { wireForPath } from './wires.js';
import type { FakeWire, WireCall } from './wires/wire.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (the raw text when it was not JSON). */
  body: unknown;
  /** Date.now() when the request arrived. */
  receivedAt: number;
  /** Date.now() when the response closed (finished, or the client went away). */
  closedAt?: number;
  /** True when the connection closed before the fake finished its answer (client abort or reset). */
  aborted: boolean;
  scenario: Scenario;
}

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>`; use `${url}/v1` as an OpenAI baseUrl and `url` as an Anthropic one. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Queue one-shot scenarios for the next requests (after header/model selection). */
  script(...scenarios: Array<Scenario | string>): void;
  /** The scenario used when nothing else selects one (initially `{ words: 20 }`). */
  setScenario(s: Scenario | string | undefined): void;
  /** The OAuth token endpoint's requests (`POST /oauth2/token`), apart from the model calls. */
  tokenRequests: TokenRequest[];
  /** Trust this service-account key at the token endpoint (and the expiry of what it issues). */
  setOAuth(opts: OAuthOptions | undefined): void;
  /** Stop accepting the tokens issued so far, as Vertex does once they are revoked. */
  revokeTokens(): void;
  /** Forget requests, queued scenarios and failTimes counters. */
  reset(): void;
  /** Resolves with `closedAt` of request `index` once its connection has closed. */
  waitClosed(index: number, timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

export interface FakeUpstreamOptions {
  port?: number;
  host?: string;
  scenario?: Scenario | string;
  /**
   * Bedrock calls must carry a well-formed SigV4 `Authorization` (or a Bearer API key); with these
   * credentials the signature is also computed again and must match (else 403, as AWS answers).
   */
  awsCredentials?: AwsCredentials;
  /** The service account the token endpoint trusts (Vertex routes need its tokens). */
  oauth?: OAuthOptions;
}

export async function startFakeUpstream(opts: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const queue: Scenario[] = [];
  const failures = new Map<string, number>();
  let fallback: Scenario = toScenario(opts.scenario) ?? { words: 20 };
  const oauth = new FakeOAuth();
  oauth.configure(opts.oauth);

  const server = createServer((req, res) => {
    void handle(req, res).catch((e) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake-upstream: ${(e as Error).message}`, type: 'fake_error' } }));
      } else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const bytes = await readBody(req);
    const raw = bytes.toString('utf8');
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'POST' && pathname === '/oauth2/token') {
      const token = oauth.exchange(raw);
      return sendJson(res, token.status, token.body);
    }
    // The wire protocol the path speaks (wires.ts); its view puts `model` and `stream` in the body where the path carries them.
    const found = wireForPath(pathname);
    const body = parseJson(raw);
    const view = found && isObject(body) ? found.call.view(body) : body;
    const scenario = pickScenario(req, view);
    const record: RecordedRequest = {
      method: req.method ?? 'GET', path: pathname, headers: req.headers, body,
      receivedAt: Date.now(), aborted: false, scenario,
    };
    requests.push(record);
    res.on('close', () => {
      record.closedAt = Date.now();
      record.aborted = !res.writableFinished;
    });
    if (req.method !== 'POST' || !found) return sendJson(res, 404, { error: { message: `no route ${req.method} ${pathname}` } });
    const { wire, call } = found;
    const refused = await wire.authenticate?.({ method: req.method, url: req.url ?? '/', pathname, headers: req.headers, body: bytes }, { oauth, awsCredentials: opts.awsCredentials });
    if (refused) return sendJson(res, refused.status, refused.body, refused.headers);
    await answer(res, wire, call, isObject(view) ? view : {}, scenario, req.headers, req.url ?? pathname);
  }

  function pickScenario(req: IncomingMessage, body: unknown): Scenario {
    const header = req.headers['x-fake-scenario'];
    if (typeof header === 'string' && header) return parseScenario(header);
    const model = isObject(body) && typeof body.model === 'string' ? body.model : '';
    if (isScenarioString(model)) return parseScenario(model);
    return queue.shift() ?? fallback;
  }

  async function answer(res: ServerResponse, wire: FakeWire, call: WireCall, body: Record<string, unknown>, s: Scenario, headers: IncomingMessage['headers'], url: string): Promise<void> {
    if (s.hangBeforeHeaders) return; // never answer; the client's timeout or abort ends it
    if (shouldFail(s)) {
      const status = s.status ?? 500;
      const retryAfter = s.retryAfter ?? ([429, 503, 529].includes(status) ? 1 : undefined);
      const echoed = s.echoCredentials ? echoCredentials(headers, url) : undefined;
      return sendJson(res, status, wire.errorBody(status, echoed), { ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }), ...wire.errorHeaders(status) });
    }
    const tooLarge = s.maxOutputTokens === undefined ? undefined : ceilingRefusal(wire, body, s.maxOutputTokens);
    if (tooLarge) return sendJson(res, 400, wire.errorBody(400, tooLarge), wire.errorHeaders(400));
    const generatedAs = wire.generatedAs;
    let events: Array<string | Uint8Array>;
    if (s.script || s.transcript) {
      const replay = s.script ? loadScript(s.script, wire.protocol) : loadTranscript(s.transcript!, wire.protocol);
      if (replay.kind === 'json') return sendRaw(res, replay.status, 'application/json', replay.body, replay.status >= 300 ? wire.errorHeaders(replay.status) : {});
      events = replay.kind === 'frames' ? replay.frames : replay.events;
    } else {
      const words = typeof s.ignoreMaxTokens === 'number' ? s.ignoreMaxTokens : (s.words ?? 20);
      const answer = s.agent ? agentTurn(generatedAs, body) : undefined;
      const gen = { protocol: generatedAs, body, words, ignoreMaxTokens: s.ignoreMaxTokens !== undefined && s.ignoreMaxTokens !== false, answer };
      // Reshaped for calls whose wire differs from what is generated (Bedrock's frames, Converse's schema).
      if (body.stream !== true) return sendGenerated(res, call.json ? call.json(generateJson(gen)) : generateJson(gen), words, s);
      events = call.events ? call.events(generateEvents(gen)) : generateEvents(gen);
    }
    if (s.malformed) {
      const at = typeof s.malformed === 'number' ? s.malformed : 1;
      events = [...events.slice(0, at), wire.malformedEvent(), ...events.slice(at)];
    }
    await streamEvents(res, events, s, wire.contentType);
  }

  function shouldFail(s: Scenario): boolean {
    if (s.failTimes === undefined) return s.status !== undefined && s.status >= 300;
    const key = JSON.stringify(s);
    const n = failures.get(key) ?? 0;
    failures.set(key, n + 1);
    return n < s.failTimes;
  }

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    requests,
    tokenRequests: oauth.requests,
    setOAuth: (o) => oauth.configure(o),
    revokeTokens: () => oauth.revoke(),
    script: (...s) => queue.push(...s.map((x) => toScenario(x)!)),
    setScenario: (s) => {
      fallback = toScenario(s) ?? { words: 20 };
    },
    reset: () => {
      requests.length = 0;
      queue.length = 0;
      failures.clear();
      oauth.reset();
    },
    waitClosed: (index, timeoutMs = 5_000) => waitClosed(requests, index, timeoutMs),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A non-streamed answer, as a real upstream sends it: generated whole (`chunkDelayMs` per word),
 * then sent at once. The stream faults keep their sense: `hangAfterEvents` never answers,
 * `resetAfterEvents` drops the connection, `malformed` and `endAfterEvents` cut the body short.
 */
async function sendGenerated(res: ServerResponse, json: unknown, words: number, s: Scenario): Promise<void> {
  if (s.chunkDelayMs) await delay(s.chunkDelayMs * words);
  if (res.destroyed || s.hangAfterEvents !== undefined) return;
  if (s.resetAfterEvents !== undefined) {
    res.socket?.destroy();
    return;
  }
  const text = JSON.stringify(json);
  sendRaw(res, 200, 'application/json', s.malformed || s.endAfterEvents !== undefined ? text.slice(0, text.length >> 1) : text);
}

async function streamEvents(res: ServerResponse, events: Array<string | Uint8Array>, s: Scenario, contentType: string): Promise<void> {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
  for (let i = 0; i < events.length; i++) {
    if (s.hangAfterEvents !== undefined && i >= s.hangAfterEvents) return; // silent, open, until the client leaves
    if (s.endAfterEvents !== undefined && i >= s.endAfterEvents) break;
    if (s.resetAfterEvents !== undefined && i >= s.resetAfterEvents) {
      res.socket?.destroy();
      return;
    }
    if (s.chunkDelayMs) await delay(s.chunkDelayMs);
    if (res.destroyed) return;
    await new Promise<void>((resolve) => res.write(events[i], () => resolve()));
  }
  if (s.resetAfterEvents !== undefined && events.length <= s.resetAfterEvents) {
    res.socket?.destroy();
    return;
  }
  res.end();
}

function waitClosed(requests: RecordedRequest[], index: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = () => {
      const at = requests[index]?.closedAt;
      if (at !== undefined) return resolve(at);
      if (Date.now() > deadline) return reject(new Error(`fake-upstream: request ${index} still open after ${timeoutMs} ms`));
      setTimeout(tick, 2);
    };
    tick();
  });
}

/** The provider's refusal of a ceiling above the model's maximum, in its words; none when within. */
function ceilingRefusal(wire: FakeWire, body: Record<string, unknown>, max: number): string | undefined {
  const asked = [body.max_tokens, body.max_completion_tokens, body.max_output_tokens].find((v) => typeof v === 'number') as number | undefined;
  if (asked === undefined || asked <= max) return undefined;
  return wire.ceilingRefusal(asked, max, String(body.model));
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendRaw(res, status, 'application/json', JSON.stringify(body), headers);
}

function sendRaw(res: ServerResponse, status: number, type: string, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toScenario(s: Scenario | string | undefined): Scenario | undefined {
  return typeof s === 'string' ? parseScenario(s) : s;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * An error message quoting the credentials a request came with, every way upstreams and the proxies
 * before them have been seen to: the headers written out, the URL with the key as a query parameter
 * (Gemini's `?key=`), and the whole header object as JSON.
 */
function echoCredentials(headers: IncomingMessage['headers'], url: string): string {
  const credential = String(headers['x-goog-api-key'] ?? headers['x-api-key'] ?? headers.authorization ?? '').replace(/^Bearer\s+/i, '');
  const quoted = `${url}${url.includes('?') ? '&' : '?'}key=${credential}`;
  return `request refused; it came with authorization=${headers.authorization ?? ''} x-api-key=${headers['x-api-key'] ?? ''} x-goog-api-key=${headers['x-goog-api-key'] ?? ''}; `
    + `as received: POST ${quoted}; headers: ${JSON.stringify(headers)}`;
}
