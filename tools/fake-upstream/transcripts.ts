import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRANSCRIPTS_DIR } from '../reference.js';
import { recordedFrames, scriptFrames } from './bedrock.js';
import type { WireProtocol } from './wires/wire.js';

/** Where recorded transcripts live: the reference folder's `transcripts/` (not part of the repository). */
export function transcriptsDir(): string {
  return TRANSCRIPTS_DIR;
}

/** The project's own scripted answers, written from the documented wire formats (see scripts/README.md). */
export function scriptsDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'scripts');
}

export type Replay =
  | { kind: 'sse'; events: string[] }
  /** Bedrock's binary event stream, one entry per frame. */
  | { kind: 'frames'; frames: Uint8Array[] }
  | { kind: 'json'; status: number; body: string };

const cache = new Map<string, Replay>();

/**
 * Load a transcript as a list of SSE event texts (each ending in a blank line), Bedrock
 * event-stream frames (`.eventstream`, and `.jsonl` under `bedrock/`), or a JSON body.
 * `.jsonl` lines become `data:` events; Anthropic and Responses ones get `event: <type>`, chat
 * ones end with `data: [DONE]`. `error-<status>-*.json` files are served with that status.
 */
export function loadTranscript(name: string, fallback: WireProtocol): Replay {
  return load(resolveFile(name, transcriptsDir()), fallback);
}

/** Load one of the project's scripts, like a transcript. */
export function loadScript(name: string, fallback: WireProtocol): Replay {
  return load(resolveFile(name, scriptsDir()), fallback);
}

function load(file: string, fallback: WireProtocol): Replay {
  const hit = cache.get(file);
  if (hit) return hit;
  const protocol = protocolOf(file) ?? fallback;
  if (file.endsWith('.eventstream')) {
    const replay: Replay = { kind: 'frames', frames: recordedFrames(file) };
    cache.set(file, replay);
    return replay;
  }
  const text = readFileSync(file, 'utf8');
  let replay: Replay;
  if (protocol === 'bedrock' && file.endsWith('.jsonl')) {
    // Anthropic events as InvokeModel chunks, or `{"<event-type>": payload}` frames (bedrock.ts).
    replay = { kind: 'frames', frames: scriptFrames(text) };
  } else if (file.endsWith('.sse')) {
    replay = { kind: 'sse', events: splitSse(text, protocol === 'google-gemini') };
  } else if (file.endsWith('.array.json')) {
    // Gemini's JSON-array stream: served as the `alt=sse` stream of the same responses.
    replay = { kind: 'sse', events: (JSON.parse(text) as unknown[]).map((r) => `data: ${JSON.stringify(r)}\r\n\r\n`) };
  } else if (file.endsWith('.jsonl')) {
    replay = { kind: 'sse', events: jsonlToSse(text, protocol) };
  } else {
    const m = /error-(\d{3})-/.exec(path.basename(file));
    replay = { kind: 'json', status: m ? Number(m[1]) : 200, body: text };
  }
  cache.set(file, replay);
  return replay;
}

function resolveFile(name: string, dir: string): string {
  const base = path.isAbsolute(name) ? name : path.join(dir, name);
  for (const candidate of [base, `${base}.sse`, `${base}.jsonl`, `${base}.json`, `${base}.eventstream`]) {
    if (existsSync(candidate) && !candidate.endsWith('/')) return candidate;
  }
  throw new Error(`fake-upstream: no file '${name}' under ${dir}`);
}

function protocolOf(file: string): WireProtocol | undefined {
  if (file.includes(`${path.sep}bedrock${path.sep}`)) return 'bedrock';
  if (file.includes('anthropic-messages')) return 'anthropic-messages';
  if (file.includes('openai-chat')) return 'openai-chat';
  if (file.includes('openai-responses')) return 'openai-responses';
  if (file.includes('google-gemini')) return 'google-gemini';
  return undefined;
}

/** Split raw SSE text into events, keeping each event's bytes and line ends (Gemini's CRLF) as recorded. */
function splitSse(text: string, crlf: boolean): string[] {
  return text
    .replace(/\r\n/g, '\n')
    .split(/\n\n+/)
    .filter((e) => e.trim() !== '')
    .map((e) => (crlf ? `${e.replace(/\n/g, '\r\n')}\r\n\r\n` : `${e}\n\n`));
}

function jsonlToSse(text: string, protocol: WireProtocol): string[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const events = lines.map((line) => {
    if (protocol === 'openai-chat' || protocol === 'google-gemini') return `data: ${line}\n\n`;
    const type = (JSON.parse(line) as { type?: string }).type ?? 'message';
    return `event: ${type}\ndata: ${line}\n\n`;
  });
  if (protocol === 'openai-chat') events.push('data: [DONE]\n\n');
  return events;
}
