/**
 * Real coding agents through the gateway: the Claude Code and Codex CLIs (pinned in
 * test/agents/clis/package.json, installed by `make agents`) run non-interactively against a real
 * gateway, with the fake upstream playing a coding model (tools/fake-upstream/agent.ts) in each
 * upstream protocol. A round trip asks the agent to run a shell command: the model calls the agent's
 * own shell tool, the agent runs it on this machine, the result goes back through the gateway, and
 * the model's final answer quotes it. Besides Anthropic- and OpenAI-speaking upstreams, Claude Code
 * reaches Claude on Bedrock (SigV4, verified by the fake) and on Vertex (an OAuth token from the
 * fake's endpoint), and Codex reaches Gemini on Vertex, its thought signature going back to Gemini.
 * Skipped, with a message, where the CLIs are not installed.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import type { FakeUpstream } from '../../tools/fake-upstream/index.js';
import { buildCatalog } from '../../src/config/load-config.js';
import { buildIdentityConfig, type IdentityConfig } from '../../src/config/identity.js';
import { userIdFor } from '../../src/http/identity/resolve-principal.js';
import { bedrockCatalogDocument, TEST_AWS_CREDENTIALS, useTestAwsCredentials } from '../support/bedrock-catalog.js';
import { FAKE_KEY_ENV } from '../support/fake-catalog.js';
import { startFakeGateway, startTestGateway, type FakeGateway, type TestGateway } from '../support/gateway.js';
import { DESKTOP_CLIENT_ID, GATEWAY_AUDIENCE, startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { VERTEX_PROJECT_PATH, vertexCatalogDocument } from '../support/vertex-catalog.js';

/** The pinned CLIs (`make agents`), or the folder `SWITCHYARD_AGENT_CLIS` names (`make agents-latest`: the newest on npm). */
const BIN = process.env.SWITCHYARD_AGENT_CLIS ?? path.resolve(import.meta.dirname, 'clis/node_modules/.bin');
const installed = (name: string) => existsSync(path.join(BIN, name));
if (!installed('claude') || !installed('codex')) {
  console.warn(`Agent conformance: the Claude Code / Codex CLIs are not installed in ${BIN}; run \`make agents\` to install them and run this suite.`);
}

let started: FakeGateway | undefined;
let fake: FakeUpstream;
let gw: TestGateway;
let home: string;
let restoreAwsEnv: (() => void) | undefined;
let issuer: TestIssuer;

/**
 * One gateway for every case: the fake catalog's Anthropic and OpenAI upstreams (`up-anthropic`,
 * `up-openai`), Claude on Bedrock (`bd`, InvokeModel) and on Vertex (`vc`), and Gemini on Vertex (`vg`);
 * it also takes tokens from an OpenID Connect provider in this process (oidc-provider), whose
 * users of the organisation `acme` are billed to the test account.
 */
beforeAll(async () => {
  restoreAwsEnv = useTestAwsCredentials();
  issuer = await startTestIssuer({ dana: { email: 'dana@acme.test', groups: ['engineering'], org: 'acme' } });
  const identity: IdentityConfig = buildIdentityConfig({ claims: { organization: 'org_id' } }, { SWITCHYARD_OIDC_ISSUER: issuer.issuer, SWITCHYARD_OIDC_AUDIENCE: GATEWAY_AUDIENCE })!;
  const catalog = (f: FakeUpstream) => buildCatalog(vertexCatalogDocument(f, bedrockCatalogDocument(f)), { [FAKE_KEY_ENV]: 'sk-fake-upstream' }, 'agent catalog');
  started = await startFakeGateway((f) => ({ catalog: catalog(f), identity }), { scenario: { agent: true }, awsCredentials: TEST_AWS_CREDENTIALS });
  ({ fake, gw } = started);
  identity.organizations.acme = gw.accountId;
});
afterAll(async () => {
  await started?.close();
  await issuer?.close();
  restoreAwsEnv?.();
});
beforeEach(() => {
  fake.reset();
  home = mkdtempSync(path.join(tmpdir(), 'swy-agent-'));
  return () => rmSync(home, { recursive: true, force: true });
});

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(path.join(BIN, bin), args, {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home, LANG: 'C.UTF-8', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What the agent's shell printed, unguessable, so only a real run of the command can produce it. */
const marker = () => `switchyard-${randomBytes(6).toString('hex')}`;

/** The upstream request that carried the tool's result back to the model, if any did. */
function toolResultRequest(): string | undefined {
  return fake.requests.map((r) => JSON.stringify(r.body)).find((b) => b.includes('switchyard-') && /tool_result|"role":"tool"|function_call_output|functionResponse/.test(b));
}

describe.skipIf(!installed('claude'))('Claude Code', () => {
  const claude = (model: string, prompt: string, extra: string[] = []) =>
    run('claude', ['-p', prompt, '--model', model, '--output-format', 'json', '--allowedTools', 'Bash', ...extra], {
      ANTHROPIC_BASE_URL: gw.url,
      ANTHROPIC_API_KEY: gw.key,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
    });

  /**
   * Claude Code runs `echo <marker>` through its Bash tool: it exits cleanly, its answer quotes the
   * command's output, and every upstream call went to `paths` (so none was refused or rerouted;
   * Claude Code asks for 32000 output tokens by default, which the gateway must not refuse).
   */
  async function roundTrip(model: string, paths: RegExp): Promise<void> {
    const m = marker();
    const r = await claude(model, `RUN: echo ${m}`);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const out = JSON.parse(r.stdout) as { result: string; is_error: boolean };
    expect(out.is_error).toBe(false);
    expect(out.result).toContain(`RESULT: ${m}`);
    expect(toolResultRequest()).toBeDefined();
    expect(fake.requests.map((q) => q.path).filter((p) => !paths.test(p))).toEqual([]);
  }

  /** Claude Code asked for (adaptive) thinking, and the signed block went back upstream, first in the assistant turn, with the tool's result. */
  function expectSignedThinkingSentBack(): void {
    const call = fake.requests.find((q) => JSON.stringify(q.body).includes('RUN: echo') && (q.body as { thinking?: unknown }).thinking);
    expect(call, 'Claude Code asked for thinking').toBeDefined();
    const withResult = fake.requests.find((q) => JSON.stringify(q.body).includes('tool_result'))!.body as { messages: Array<{ role: string; content: unknown }> };
    const assistant = withResult.messages.filter((msg) => msg.role === 'assistant').at(-1)!;
    expect((assistant.content as Array<Record<string, unknown>>)[0]).toMatchObject({ type: 'thinking', signature: expect.stringMatching(/^agent-signature-call_agent_/) });
  }

  it('runs a shell command through a tool round trip (up-anthropic upstream), its signed thinking sent back with the result', async () => {
    await roundTrip('up-anthropic', /^\/v1\/messages$/);
    expectSignedThinkingSentBack();
  }, 180_000);

  it('runs a shell command through a tool round trip (up-openai upstream)', async () => {
    await roundTrip('up-openai', /^\/v1\/chat\/completions$/);
  }, 180_000);

  it('runs a shell command through a tool round trip with Claude on Bedrock (SigV4 verified), its signed thinking sent back', async () => {
    // Every call reached InvokeModel's streaming route (the fake refuses a bad signature with 403).
    await roundTrip('bd', /^\/model\/anthropic\.claude-sonnet-4-5-20250929-v1(:|%3A)0\/invoke-with-response-stream$/);
    expectSignedThinkingSentBack();
    expect(fake.requests.every((q) => String(q.headers.authorization).startsWith(`AWS4-HMAC-SHA256 Credential=${TEST_AWS_CREDENTIALS.accessKeyId}/`))).toBe(true);
  }, 180_000);

  it('runs a shell command through a tool round trip with Claude on Vertex (OAuth token), its signed thinking sent back', async () => {
    const route = `${VERTEX_PROJECT_PATH}/anthropic/models/claude-sonnet-4-5(@|%40)20250929:streamRawPredict`.replace(/\./g, '\\.');
    // Every call reached rawPredict's streaming route (the fake refuses one without a token from its OAuth endpoint with 401).
    await roundTrip('vc', new RegExp(`^${route}$`));
    expectSignedThinkingSentBack();
  }, 180_000);

  /**
   * Claude Code configured for Bedrock or Vertex, pointed at the gateway instead of the cloud: it
   * sends Bedrock's InvokeModel (its event stream back) or Vertex's streamRawPredict, with the
   * gateway key as its bearer token, and the gateway serves them through the same pipeline (here to
   * the Anthropic-speaking upstream).
   */
  async function cloudClientRoundTrip(env: Record<string, string>): Promise<void> {
    const m = marker();
    const model = 'up-anthropic';
    const r = await run('claude', ['-p', `RUN: echo ${m}`, '--model', model, '--output-format', 'json', '--allowedTools', 'Bash'], {
      ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      ...env,
    });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect((JSON.parse(r.stdout) as { result: string }).result).toContain(`RESULT: ${m}`);
    expect(toolResultRequest()).toBeDefined();
    expect(new Set(fake.requests.map((q) => q.path))).toEqual(new Set(['/v1/messages']));
    const [record] = await gw.ledger.usageRecords(gw.accountId, 1);
    expect(record.modelServed).toBe(model);
  }

  it('runs a tool round trip configured for Bedrock (CLAUDE_CODE_USE_BEDROCK, ANTHROPIC_BEDROCK_BASE_URL at the gateway)', async () => {
    await cloudClientRoundTrip({ CLAUDE_CODE_USE_BEDROCK: '1', ANTHROPIC_BEDROCK_BASE_URL: gw.url, AWS_BEARER_TOKEN_BEDROCK: gw.key, AWS_REGION: 'us-east-1' });
  }, 180_000);

  it('runs a tool round trip configured for Vertex (CLAUDE_CODE_USE_VERTEX, ANTHROPIC_VERTEX_BASE_URL at the gateway)', async () => {
    await cloudClientRoundTrip({
      CLAUDE_CODE_USE_VERTEX: '1',
      ANTHROPIC_VERTEX_BASE_URL: `${gw.url}/v1`,
      ANTHROPIC_VERTEX_PROJECT_ID: 'acme-project',
      CLOUD_ML_REGION: 'us-east5',
      CLAUDE_CODE_SKIP_VERTEX_AUTH: '1',
      ANTHROPIC_AUTH_TOKEN: gw.key,
    });
  }, 180_000);

  it('continues a session: the second turn carries the first', async () => {
    const first = marker();
    const r1 = await claude('up-anthropic', `RUN: echo ${first}`);
    expect(r1.code, r1.stderr).toBe(0);
    fake.reset();
    const r2 = await claude('up-anthropic', 'And now say hello.', ['--continue']);
    expect(r2.code, r2.stderr).toBe(0);
    expect((JSON.parse(r2.stdout) as { result: string }).result).toContain('OK:');
    // The upstream saw the earlier turn (its command and its result) in the conversation.
    expect(fake.requests.some((q) => JSON.stringify(q.body).includes(first) && JSON.stringify(q.body).includes('And now say hello.'))).toBe(true);
  }, 240_000);
});

/**
 * Claude Code with an `apiKeyHelper` (in the user's settings.json) printing the user's token from
 * the organisation's identity provider: test/agents/idp-token-helper.mjs exchanges the refresh
 * token a sign-in left for a fresh access token, as an organisation's helper does. Claude Code sends
 * it on every request; the gateway verifies it against the provider's published keys and bills
 * the user's organisation's account, each record naming the user.
 */
describe.skipIf(!installed('claude'))('Claude Code with an apiKeyHelper printing an identity-provider token', () => {
  const HELPER = path.resolve(import.meta.dirname, 'idp-token-helper.mjs');

  it('completes a tool round trip, every request authenticated by the token and attributed to its user', async () => {
    const { refreshToken } = await issuer.signIn('dana', { offline: true });
    expect(refreshToken, 'the identity provider issued a refresh token').toBeTruthy();
    const state = path.join(home, 'idp-helper-state.json');
    writeFileSync(state, JSON.stringify({ token_endpoint: `${issuer.issuer}/token`, client_id: DESKTOP_CLIENT_ID, refresh_token: refreshToken }));
    mkdirSync(path.join(home, '.claude'));
    writeFileSync(path.join(home, '.claude', 'settings.json'), JSON.stringify({ apiKeyHelper: `"${process.execPath}" "${HELPER}" "${state}"` }));
    const dana = userIdFor(issuer.issuer, 'dana');
    const before = new Set((await gw.ledger.usageRecords(gw.accountId, 1000)).map((r) => r.requestId));

    const m = marker();
    const model = 'up-anthropic';
    // No ANTHROPIC_API_KEY: the helper's token is the only credential Claude Code has.
    const r = await run('claude', ['-p', `RUN: echo ${m}`, '--model', model, '--output-format', 'json', '--allowedTools', 'Bash'], {
      ANTHROPIC_BASE_URL: gw.url,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
    });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect((JSON.parse(r.stdout) as { result: string }).result).toContain(`RESULT: ${m}`);
    expect(toolResultRequest()).toBeDefined();
    expect((JSON.parse(readFileSync(state, 'utf8')) as { printed?: number }).printed, 'Claude Code ran the helper').toBeGreaterThanOrEqual(1);

    // Every completion this run made is the user's (none fell back to a key), one per upstream call.
    const records = (await gw.ledger.usageRecords(gw.accountId, 1000)).filter((rec) => !before.has(rec.requestId));
    expect(records.length).toBe(fake.requests.length);
    expect(records.every((rec) => rec.userId === dana && rec.keyId === null)).toBe(true);
    // The admin API shows the user and their usage.
    const users = (await (await gw.admin(`/admin/users?account_id=${gw.accountId}`)).json()) as { data: Array<{ id: string; subject: string; name: string | null }> };
    expect(users.data.find((u) => u.id === dana)).toMatchObject({ subject: 'dana', name: 'dana@acme.test' });
    const usage = (await (await gw.admin(`/admin/accounts/${gw.accountId}/usage?user_id=${dana}&limit=1000`)).json()) as { data: Array<{ request_id: string; user_id: string; cost: number }> };
    expect(usage.data.map((u) => u.request_id).sort()).toEqual(records.map((rec) => rec.requestId).sort());
    expect(usage.data.every((u) => u.user_id === dana)).toBe(true);
  }, 180_000);
});

/**
 * The README's minimal catalog, as documented, with its providers pointed at the fake (and so a
 * price of its own: the price table matches the providers' real URLs); `swap` moves
 * the Claude patterns to the OpenAI model, so Claude Code's own model names reach a chat upstream.
 */
function readmeMinimalCatalog(swap: boolean): string {
  const readme = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
  const yaml = /The minimal form:\n+```yaml\n([\s\S]*?)```/.exec(readme)![1];
  const doc = parseYaml(yaml) as { providers: Record<string, { base_url: string }>; models: Array<{ patterns?: string[]; price?: unknown; free?: boolean }> };
  doc.providers.openai.base_url = `${fake.url}/v1`;
  doc.providers.anthropic.base_url = fake.url;
  // The price table prices these models at OpenAI's and Anthropic's URLs only; at the fake's, an
  // unpriced model stops the start, so they are served free here.
  for (const m of doc.models) if (m.price === undefined) m.free = true;
  if (swap) [doc.models[0].patterns, doc.models[1].patterns] = [doc.models[1].patterns, doc.models[0].patterns];
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'swy-agent-catalog-')), 'catalog.yaml');
  writeFileSync(file, toYaml(doc));
  return file;
}

describe.skipIf(!installed('claude'))('Claude Code with its defaults and the README minimal catalog', () => {
  for (const [upstream, swap] of [['Anthropic', false], ['OpenAI', true]] as const) {
    it(`completes a tool round trip through an ${upstream}-speaking upstream, no model configured in the agent`, async () => {
      process.env.OPENAI_API_KEY ??= 'sk-fake-openai';
      process.env.ANTHROPIC_API_KEY ??= 'sk-fake-anthropic';
      const minimal = await startTestGateway({ configPath: readmeMinimalCatalog(swap) });
      try {
        const m = marker();
        const r = await run('claude', ['-p', `RUN: echo ${m}`, '--output-format', 'json', '--allowedTools', 'Bash'], {
          ANTHROPIC_BASE_URL: minimal.url,
          ANTHROPIC_API_KEY: minimal.key,
          DISABLE_AUTOUPDATER: '1',
          DISABLE_TELEMETRY: '1',
        });
        expect(r.code, r.stderr + r.stdout).toBe(0);
        expect((JSON.parse(r.stdout) as { result: string }).result).toContain(`RESULT: ${m}`);
        const paths = new Set(fake.requests.map((q) => q.path));
        expect(paths).toEqual(new Set([swap ? '/v1/chat/completions' : '/v1/messages']));
      } finally {
        await minimal.close();
      }
    }, 180_000);
  }
});

describe.skipIf(!installed('codex'))('Codex', () => {
  const codex = (model: string, prompt: string, config: string[] = []) =>
    run(
      'codex',
      [
        'exec',
        '--skip-git-repo-check',
        '--dangerously-bypass-approvals-and-sandbox',
        '-c', 'model_provider="switchyard"',
        '-c', 'model_providers.switchyard.name="Switchyard"',
        '-c', `model_providers.switchyard.base_url="${gw.url}/v1"`,
        '-c', 'model_providers.switchyard.env_key="SWITCHYARD_KEY"',
        '-c', 'model_providers.switchyard.wire_api="responses"',
        ...config.flatMap((c) => ['-c', c]),
        '-m', model,
        prompt,
      ],
      { SWITCHYARD_KEY: gw.key, CODEX_HOME: home },
    );

  /** Codex runs `echo <marker>` through its shell tool and prints the model's answer quoting its output. */
  async function roundTrip(model: string, config: string[] = []): Promise<Ran> {
    const m = marker();
    const r = await codex(model, `RUN: echo ${m}`, config);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout + r.stderr).toContain(`RESULT: ${m}`);
    expect(toolResultRequest()).toBeDefined();
    return r;
  }

  for (const model of ['up-openai', 'up-anthropic']) {
    it(`runs a shell command through a tool round trip (${model} upstream)`, async () => {
      await roundTrip(model);
    }, 180_000);
  }

  it('with supports_websockets, falls back to HTTP at the first 426 instead of reconnecting five times', async () => {
    const r = await roundTrip('up-openai', ['model_providers.switchyard.supports_websockets=true']);
    const output = r.stdout + r.stderr;
    expect(output).not.toMatch(/Reconnecting/);
    expect((output.match(/failed to connect to Responses WebSocket/g) ?? []).length).toBeLessThanOrEqual(1);
  }, 180_000);

  it('runs a shell command through a tool round trip with Gemini on Vertex, the thought signature going back to Gemini', async () => {
    await roundTrip('vg');
    const route = `${VERTEX_PROJECT_PATH}/google/models/gemini-2.5-flash:streamGenerateContent`;
    expect(fake.requests.map((q) => q.path).filter((p) => p !== route)).toEqual([]);
    // The call that carried the tool's result: the model's turn before it holds the function call
    // with the signature Gemini put on it, back on that same part.
    type Content = { role: string; parts: Array<Record<string, unknown>> };
    const withResult = fake.requests.map((q) => q.body as { contents: Content[] }).find((b) => b.contents.some((c) => c.parts.some((p) => p.functionResponse)));
    expect(withResult, 'the tool result went back to Gemini').toBeDefined();
    const modelTurn = withResult!.contents.filter((c) => c.role === 'model').at(-1)!;
    const call = modelTurn.parts.find((p) => p.functionCall);
    expect(call).toMatchObject({ functionCall: { name: expect.any(String) }, thoughtSignature: expect.stringMatching(/^agent-signature-call_agent_\d+$/) });
  }, 180_000);
});
