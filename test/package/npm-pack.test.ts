/**
 * The package as a user gets it: `npm run build` and `npm pack`, the tarball installed into an
 * empty folder from the npm cache, and its `switchyard serve` started there against the fake
 * upstream, with one request through each protocol. What it proves: the bin runs compiled
 * JavaScript, the tarball carries every file the server reads, and the runtime dependencies are
 * complete without the development ones (tsx, TypeScript), with one PGlite. The install and PGlite's first start
 * take most of its time; the timeout allows for a loaded machine (114 s at a load of 15 on 2 cores).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { captureChildLog } from '../support/log-capture.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, env: { ...process.env, npm_config_update_notifier: 'false' } });

describe('the npm package', () => {
  let dir: string;
  let fake: FakeUpstream;
  let server: ChildProcess | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-pack-'));
    fake = await startFakeUpstream();
  });
  afterAll(async () => {
    server?.kill('SIGKILL');
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs from its tarball and serves chat, messages and Responses without tsx', async () => {
    // Built first, as `make pack` does: with install scripts off (.npmrc) npm pack runs no prepack.
    await run('npm', ['run', 'build', '--silent'], { cwd: REPO });
    const { stdout } = await npm(['pack', '--json', '--pack-destination', dir], REPO);
    const [packed] = JSON.parse(stdout.slice(stdout.search(/^\[/m))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = packed.files.map((f) => f.path);
    expect(files).toContain('dist/src/main.js');
    expect(files).toContain('dist/generated/openapi.yaml');
    expect(files).toContain('dist/generated/openapi.json');
    // The web console's bundle (make console), which the package serves at /console.
    for (const asset of ['index.html', 'app.js', 'app.css']) expect(files).toContain(`dist/console/dist/${asset}`);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    // What users run and read, no build leftovers or README's pictures.
    expect(files.filter((f) => /\.(map|png|jpe?g)$/.test(f))).toEqual([]);
    for (const f of files) expect(['bin', 'config', 'dist', 'docs', 'package.json', 'README.md', 'LICENSE']).toContain(f.split('/')[0]);
    const docs = readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
    expect(files.filter((f) => f.startsWith('docs/')).sort()).toEqual(docs.sort());

    // An empty folder; the registry is not needed when the cache holds every dependency.
    const app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'uses-switchyard', private: true }));
    await npm(['install', '--prefer-offline', '--omit=dev', join(dir, packed.filename)], app);
    // No TypeScript loader or compiler anywhere: the bin can only be running dist/.
    for (const devOnly of ['tsx', 'typescript', '@typespec/compiler']) expect(existsSync(join(app, 'node_modules', devOnly))).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'switchyard', 'src'))).toBe(false);
    // One PGlite (27 MB), the one package.json names: no dependency may bring its own copy.
    const pglites = (readdirSync(app, { recursive: true }) as string[]).filter((f) => /(^|\/)node_modules\/@electric-sql\/pglite\/package\.json$/.test(f));
    expect(pglites).toEqual(['node_modules/@electric-sql/pglite/package.json']);
    const wanted = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).dependencies['@electric-sql/pglite'];
    expect(JSON.parse(readFileSync(join(app, pglites[0]), 'utf8')).version).toBe(wanted);

    const config = join(dir, 'catalog.yaml');
    writeFileSync(config, [
      'providers:',
      `  fake-openai: { type: openai, base_url: "${fake.url}/v1", max_retries: 0 }`,
      `  fake-anthropic: { type: anthropic, base_url: "${fake.url}", max_retries: 0 }`,
      'models:',
      '  - { id: fake-gpt, provider: fake-openai, upstream_model: gpt-4o-mini, price: { input: "1", output: "4" } }',
      '  - { id: fake-claude, provider: fake-anthropic, upstream_model: claude-sonnet-4-5, price: { input: "3", output: "15" } }',
      '',
    ].join('\n'));
    const bin = join(app, 'node_modules', '.bin', 'switchyard');
    server = spawn(bin, ['serve', '--demo'], {
      cwd: app,
      env: { ...process.env, PORT: '0', SWITCHYARD_CONFIG: config, SWITCHYARD_DATA_DIR: join(dir, 'data'), DATABASE_URL: '', REDIS_URL: '', NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    captureChildLog(server, 'packed-serve');
    let out = '';
    server.stdout!.on('data', (d) => (out += d));
    server.stderr!.on('data', (d) => (out += d));
    await vi.waitFor(() => expect(out).toMatch(/Try it:/), { timeout: 120_000, interval: 100 });
    const url = /OpenAI-compatible base URL: +(http:\/\/\S+)\/v1/.exec(out)![1];
    const key = /^ +(sk-sy-\S+)$/m.exec(out)![1];

    const post = async (path: string, headers: Record<string, string>, body: unknown) => {
      const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const hello = [{ role: 'user', content: 'Hello!' }];
    const chat = await post('/v1/chat/completions', { authorization: `Bearer ${key}` }, { model: 'fake-gpt', messages: hello });
    expect(chat.status).toBe(200);
    expect(chat.body.choices[0].message.content).toMatch(/\w+/);
    const messages = await post('/v1/messages', { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, { model: 'fake-claude', max_tokens: 100, messages: hello });
    expect(messages.status).toBe(200);
    expect(messages.body.content[0]).toMatchObject({ type: 'text' });
    const responses = await post('/v1/responses', { authorization: `Bearer ${key}` }, { model: 'fake-gpt', input: 'Hello!' });
    expect(responses.status).toBe(200);
    expect(responses.body).toMatchObject({ object: 'response', status: 'completed' });
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/messages', '/v1/chat/completions']);
    const page = await fetch(`${url}/console`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/console/app.js');
    expect((await fetch(`${url}/console/app.js`)).status).toBe(200);
  }, 180_000);
});
