/**
 * What Codex sends that other Responses clients do not, through the real server: a WebSocket
 * upgrade on `GET /v1/responses` (with `supports_websockets`), answered 426 at once so Codex falls
 * back to `POST /v1/responses` without retrying; and `namespace` tools (its sub-agent tools),
 * flattened to function tools for upstreams that are not Responses and restored on the way back.
 */
import { request } from 'node:http';
import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/config/load-config.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from '../support/fake-catalog.js';
import { useSdkGateway } from '../support/sdk-gateway.js';

/** The fake catalog (`up-openai` speaks chat, `up-anthropic` Messages) and `up-responses`, a Responses upstream. */
const sdk = useSdkGateway((fake) => {
  const doc = fakeCatalogDocument(fake) as { providers: Record<string, unknown>; models: Array<Record<string, unknown>> };
  doc.providers['up-responses'] = { type: 'openai-responses', base_url: `${fake.url}/v1`, api_key_env: FAKE_KEY_ENV, max_retries: 0 };
  doc.models.push({ id: 'up-responses', provider: 'up-responses', upstream_model: 'gpt-5-mini', price: { input: '1', output: '4' }, max_output_tokens: 32_000, capabilities: { tools: true } });
  return { catalog: buildCatalog(doc, { [FAKE_KEY_ENV]: 'sk-fake-upstream' }, 'codex contract catalog') };
});

/** A WebSocket handshake as Codex opens it; resolves with what came back. */
function openWebSocket(path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(path, sdk.gw.url);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'GET',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'openai-beta': 'responses_websockets=2026-02-06',
        ...headers,
      },
    });
    req.on('upgrade', () => reject(new Error('the gateway switched protocols')));
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Responses over WebSocket (Codex with supports_websockets)', () => {
  it('is answered 426 in the Responses error shape with a request id, and nothing reaches an upstream', async () => {
    const r = await openWebSocket('/v1/responses', { authorization: `Bearer ${sdk.gw.key}` });
    expect(r.status).toBe(426);
    expect(r.headers['x-request-id']).toMatch(/^req_/);
    expect(JSON.parse(r.body)).toEqual({
      error: { type: 'invalid_request_error', code: 'websocket_not_supported', param: null, message: expect.stringContaining('POST /v1/responses') },
    });
    expect(sdk.fake.requests).toEqual([]);
  });

  it('a plain GET /v1/responses is still a 405, and POST still serves', async () => {
    const res = await fetch(`${sdk.gw.url}/v1/responses`, { headers: { authorization: `Bearer ${sdk.gw.key}` } });
    expect(res.status).toBe(405);
    const answer = await sdk.openai.responses.create({ model: 'up-openai', input: 'Hi' });
    expect(answer.status).toBe('completed');
  });
});

/** Codex's sub-agent tools, grouped as it sends them, with a plain function beside them. */
const agentsNamespace = {
  type: 'namespace',
  name: 'agents',
  description: 'Sub-agents',
  tools: [
    { type: 'function', name: 'spawn_agent', description: 'Start a sub-agent', parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }, strict: false },
    { type: 'function', name: 'send_input', parameters: { type: 'object', properties: { id: { type: 'string' }, message: { type: 'string' } } } },
  ],
};
const shellTool = { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } }, strict: false };
const tools = [shellTool, agentsNamespace] as unknown as OpenAI.Responses.Tool[];

/** The upstream request's body. */
const sent = (i = -1) => sdk.fake.requests.at(i)!.body as Record<string, any>;

describe("Codex's namespace tools", () => {
  it('reach a chat upstream as functions named <namespace>__<name>, and the call comes back with its namespace (streamed and not)', async () => {
    for (const stream of [false, true]) {
      sdk.fake.script('script:openai-chat/stream-namespaced-tool-call');
      const params = { model: 'up-openai', input: 'Get a review', tools };
      let response: OpenAI.Responses.Response;
      let res: Response;
      if (stream) {
        const s = await sdk.openai.responses.create({ ...params, stream: true }).withResponse();
        res = s.response;
        let done: OpenAI.Responses.Response | undefined;
        const added: unknown[] = [];
        for await (const ev of s.data) {
          if (ev.type === 'response.output_item.added') added.push(ev.item);
          if (ev.type === 'response.completed') done = ev.response;
        }
        expect(added[0]).toMatchObject({ type: 'function_call', namespace: 'agents', name: 'spawn_agent' });
        response = done!;
      } else {
        const r = await sdk.openai.responses.create(params).withResponse();
        res = r.response;
        response = r.data;
      }
      expect(sent().tools.map((t: any) => t.function.name)).toEqual(['exec_command', 'agents__spawn_agent', 'agents__send_input']);
      expect(sent().tools[1].function).toMatchObject({ description: 'Start a sub-agent', parameters: agentsNamespace.tools[0].parameters });
      expect(res.headers.get('x-switchyard-warnings')).toBeNull();
      expect(response.output).toEqual([expect.objectContaining({ type: 'function_call', namespace: 'agents', name: 'spawn_agent', arguments: '{"message": "Review the patch"}' })]);
      // The tools are echoed as the client sent them.
      expect(response.tools).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'namespace', name: 'agents' })]));
      expect(response.tools).toHaveLength(2);
      sdk.fake.reset();
    }
  });

  it("an earlier namespaced call goes back to Anthropic under the flattened name, with its result", async () => {
    const input = [
      { role: 'user', content: 'Get a review' },
      { type: 'function_call', call_id: 'call_1', namespace: 'agents', name: 'spawn_agent', arguments: '{"message":"Review"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'agent-7 started' },
    ] as unknown as OpenAI.Responses.ResponseInput;
    await sdk.openai.responses.create({ model: 'up-anthropic', input, tools });
    const assistant = sent().messages.find((m: any) => m.role === 'assistant');
    expect(assistant.content).toEqual([expect.objectContaining({ type: 'tool_use', id: 'call_1', name: 'agents__spawn_agent', input: { message: 'Review' } })]);
    expect(sent().tools.map((t: any) => t.name)).toEqual(['exec_command', 'agents__spawn_agent', 'agents__send_input']);
  });

  it('reach a Responses upstream as the namespace tool itself; its namespaced call comes back unchanged', async () => {
    sdk.fake.script('script:openai-responses/stream-namespaced-function-call');
    const response = await sdk.openai.responses.create({ model: 'up-responses', input: 'Get a review', tools });
    expect(sent().tools).toEqual([expect.objectContaining({ type: 'function', name: 'exec_command' }), agentsNamespace]);
    expect(response.output).toEqual([expect.objectContaining({ type: 'function_call', namespace: 'agents', name: 'spawn_agent', arguments: '{"country":"France"}' })]);
    // The next turn sends the call back with its namespace.
    const input = [
      { role: 'user', content: 'Get a review' },
      ...response.output,
      { type: 'function_call_output', call_id: (response.output[0] as { call_id: string }).call_id, output: 'started' },
    ] as unknown as OpenAI.Responses.ResponseInput;
    await sdk.openai.responses.create({ model: 'up-responses', input, tools, store: false });
    expect(sent().input[1]).toMatchObject({ type: 'function_call', namespace: 'agents', name: 'spawn_agent' });
  });

  it('a namespace without a name, or a namespaced function with a name no upstream takes, is a 400', async () => {
    const unnamed = [{ ...agentsNamespace, name: '' }] as unknown as OpenAI.Responses.Tool[];
    await expect(sdk.openai.responses.create({ model: 'up-openai', input: 'Hi', tools: unnamed })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('tools') });
    const badName = [{ ...agentsNamespace, tools: [{ type: 'function', name: 'spawn agent' }] }] as unknown as OpenAI.Responses.Tool[];
    await expect(sdk.openai.responses.create({ model: 'up-openai', input: 'Hi', tools: badName })).rejects.toMatchObject({ status: 400, param: 'tools.0.tools.0.name' });
  });
});
