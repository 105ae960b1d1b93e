import { readFileSync } from 'node:fs';
import { startFakeUpstream } from './server.js';

/**
 * CLI: `node --import tsx tools/fake-upstream/main.ts [--port 9100] [--host 127.0.0.1] [--scenario words:20]`.
 * Serves POST /v1/chat/completions, /v1/messages, /v1/responses, Gemini's
 * `/v1beta/models/{model}:generateContent` / `:streamGenerateContent` and Bedrock's
 * `/model/{modelId}/invoke` / `/invoke-with-response-stream` (SigV4 or Bearer required) until interrupted.
 * With `--google-public-key <pem file>` (a service account's public key) it also serves Vertex's
 * routes (`/v1/projects/{p}/locations/{l}/publishers/{anthropic|google}/models/...`) to tokens its
 * `POST /oauth2/token` issues for that account (point the credentials file's `token_uri` there).
 */
function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const fake = await startFakeUpstream({
  port: Number(arg('port') ?? 9100),
  host: arg('host') ?? '127.0.0.1',
  scenario: arg('scenario'),
  ...(arg('google-public-key') ? { oauth: { publicKey: readFileSync(arg('google-public-key')!, 'utf8') } } : {}),
});
console.log(`fake-upstream listening on ${fake.url} (OpenAI baseUrl ${fake.url}/v1, Anthropic baseUrl ${fake.url})`);
const stop = () => void fake.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
