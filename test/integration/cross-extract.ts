/**
 * What an answer says, independent of protocol: text, reasoning text and tool calls. Extracted
 * once from the upstream transcript file and once from what the client received, so a test can
 * assert that translation kept the content (the transcripts are parsed here by hand, without the
 * gateway's decoders, so the comparison is not circular).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { bodyProblems, streamProblems, type Answer, type ClientProtocol } from './cross-support.js';

export interface Content {
  text: string;
  reasoning: string;
  tools: Array<{ name: string; args: string }>;
}

const empty = (): Content => ({ text: '', reasoning: '', tools: [] });

/** Tool arguments compared as parsed JSON (`{}` for nothing or for JSON cut off mid-way). */
export function canonicalArgs(args: string): string {
  if (args.trim() === '') return '{}';
  try {
    return JSON.stringify(JSON.parse(args));
  } catch {
    return '{}';
  }
}

function payloads(file: string): any[] {
  const text = readFileSync(file, 'utf8');
  const lines = file.endsWith('.sse')
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim())
    : text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.filter((l) => l !== '[DONE]').map((l) => JSON.parse(l));
}

/** The content of an upstream transcript (chat or messages; stream or JSON body). */
export function transcriptContent(root: string, file: string): Content {
  const full = path.join(root, file);
  if (file.endsWith('.json')) {
    const body = JSON.parse(readFileSync(full, 'utf8'));
    return file.startsWith('openai-chat') ? chatBody(body) : messageBody(body);
  }
  const events = payloads(full);
  return file.startsWith('openai-chat') ? chatChunks(events) : messageEvents(events);
}

function chatChunks(chunks: any[]): Content {
  const c = empty();
  const tools: Record<number, { name: string; args: string }> = {};
  for (const chunk of chunks) {
    const choice = (chunk.choices ?? []).find((x: any) => (x.index ?? 0) === 0);
    const d = choice?.delta ?? {};
    // `refusal` is the refusal's explanation (carried as the finish's details), not answer text.
    c.text += d.content ?? '';
    c.reasoning += d.reasoning_content ?? '';
    for (const tc of d.tool_calls ?? []) {
      const slot = (tools[tc.index] ??= { name: '', args: '' });
      slot.name += tc.function?.name ?? '';
      slot.args += tc.function?.arguments ?? '';
    }
  }
  c.tools = Object.values(tools);
  return c;
}

function chatBody(body: any): Content {
  const m = body.choices?.[0]?.message ?? {};
  return {
    // `refusal` carries the refusal's explanation (OpenAI's refusal text, Anthropic's
    // stop_details), not content.
    text: m.content ?? '',
    reasoning: m.reasoning_content ?? '',
    tools: (m.tool_calls ?? []).map((t: any) => ({ name: t.function.name, args: t.function.arguments })),
  };
}

function messageEvents(events: any[]): Content {
  const c = empty();
  const tools: Record<number, { name: string; args: string }> = {};
  for (const ev of events) {
    if (ev.type === 'content_block_start' && ev.content_block.type === 'tool_use') tools[ev.index] = { name: ev.content_block.name, args: '' };
    if (ev.type !== 'content_block_delta') continue;
    const d = ev.delta;
    if (d.type === 'text_delta') c.text += d.text;
    if (d.type === 'thinking_delta') c.reasoning += d.thinking;
    if (d.type === 'input_json_delta') tools[ev.index].args += d.partial_json;
  }
  c.tools = Object.values(tools);
  return c;
}

function messageBody(body: any): Content {
  const c = empty();
  for (const b of body.content ?? []) {
    if (b.type === 'text') c.text += b.text;
    if (b.type === 'thinking') c.reasoning += b.thinking;
    if (b.type === 'tool_use') c.tools.push({ name: b.name, args: JSON.stringify(b.input) });
  }
  return c;
}

/** The content of what a client received, in its own protocol. */
export function answerContent(protocol: ClientProtocol, a: Answer): Content {
  const stream = a.frames.length > 0;
  if (protocol === 'chat') return stream ? chatChunks(a.frames.map((f) => f.data).filter((d) => d !== '[DONE]')) : chatBody(a.json);
  if (protocol === 'messages') return stream ? messageEvents(a.frames.map((f) => f.data)) : messageBody(a.json);
  const response = stream ? a.frames.map((f) => f.data).find((d) => d.type === 'response.completed' || d.type === 'response.incomplete')?.response : a.json;
  return responseOutput(response ?? {});
}

function responseOutput(r: any): Content {
  const c = empty();
  for (const item of r.output ?? []) {
    // A `refusal` part is the refusal's explanation, not answer text (as on chat).
    if (item.type === 'message') for (const part of item.content ?? []) c.text += part.text ?? '';
    if (item.type === 'reasoning') c.reasoning += (item.summary ?? []).map((s: any) => s.text).join('');
    if (item.type === 'function_call') c.tools.push({ name: item.name, args: item.arguments });
  }
  return c;
}

/** Normalised for comparison: tool arguments as canonical JSON. */
export function comparable(c: Content): Content {
  return { ...c, tools: c.tools.map((t) => ({ name: t.name, args: canonicalArgs(t.args) })) };
}

/**
 * A recorded upstream answer replayed to a client: an upstream error is `status` in the client's
 * error shape; otherwise a well-formed body or stream whose content is the recording's.
 */
export function expectReplayed(protocol: ClientProtocol, a: Answer, status: number, stream: boolean, recorded: Content): void {
  if (status !== 200) {
    expect(a.status).toBe(status);
    expect(bodyProblems(protocol, a.status, a.json)).toEqual([]);
    return;
  }
  expect(a.status, a.text).toBe(200);
  if (stream) expect(streamProblems(protocol, a.frames)).toEqual([]);
  else expect(bodyProblems(protocol, 200, a.json)).toEqual([]);
  expect(comparable(answerContent(protocol, a))).toEqual(comparable(recorded));
}

/**
 * How an answer is built, in one line a reviewer can read: its parts in order (runs of the same
 * part collapsed, `content_block_delta:text_delta×12`), how it ended and its usage, in the
 * client's protocol. With the content compared above and each frame checked against the schemas,
 * this is what a whole-answer snapshot would pin, without the payloads repeated in every frame.
 */
export function answerOutline(protocol: ClientProtocol, a: Answer): string {
  const stream = a.frames.length > 0;
  const parts = stream ? a.frames.map((f) => framePart(protocol, f)) : bodyParts(protocol, a.json);
  const last = lastObject(protocol, a);
  return JSON.stringify({ parts: collapse(parts), end: ending(protocol, a, last), usage: usageOf(last), switchyard: last?.switchyard });
}

function collapse(parts: string[]): string[] {
  const out: Array<{ part: string; n: number }> = [];
  for (const part of parts) {
    if (out.at(-1)?.part === part) out.at(-1)!.n += 1;
    else out.push({ part, n: 1 });
  }
  return out.map(({ part, n }) => (n > 1 ? `${part}×${n}` : part));
}

function framePart(protocol: ClientProtocol, f: { event?: string; data: any }): string {
  if (f.data === '[DONE]') return '[DONE]';
  if (protocol === 'chat') {
    const choice = f.data.choices?.[0];
    if (!choice) return f.data.usage ? 'usage' : 'empty';
    const keys = Object.entries(choice.delta ?? {}).filter(([, v]) => v !== null && v !== '').map(([k]) => k);
    return [...keys, ...(choice.finish_reason ? [`finish:${choice.finish_reason}`] : [])].join('+') || 'delta';
  }
  const d = f.data;
  const sub = d.content_block?.type ?? d.delta?.type ?? d.item?.type ?? d.part?.type;
  return sub && d.type !== 'message_delta' ? `${f.event ?? d.type}:${sub}` : (f.event ?? d.type);
}

function bodyParts(protocol: ClientProtocol, body: any): string[] {
  if (protocol === 'chat') {
    const m = body?.choices?.[0]?.message ?? {};
    return Object.entries(m).filter(([, v]) => v !== null && v !== '').map(([k, v]) => (Array.isArray(v) ? `${k}:${v.length}` : k));
  }
  if (protocol === 'messages') return (body?.content ?? []).map((b: any) => b.type);
  return (body?.output ?? []).map((i: any) => (i.type === 'message' ? `message:${(i.content ?? []).map((p: any) => p.type).join('+')}` : i.type));
}

/** The object that says how the answer ended: the body, or the stream's last word on it. */
function lastObject(protocol: ClientProtocol, a: Answer): any {
  if (a.frames.length === 0) return a.json;
  const data = a.frames.map((f) => f.data).filter((d) => d !== '[DONE]');
  if (protocol === 'responses') return data.findLast((d) => d.response?.status && d.response.status !== 'in_progress')?.response;
  if (protocol === 'messages') return data.findLast((d) => d.type === 'message_delta');
  return data.findLast((d) => d.usage) ?? data.at(-1);
}

function ending(protocol: ClientProtocol, a: Answer, last: any): unknown {
  if (protocol === 'responses') return [last?.status, last?.incomplete_details?.reason ?? null];
  if (protocol === 'messages') {
    const end = a.frames.length > 0 ? last?.delta : last;
    return [end?.stop_reason, end?.stop_details?.type ?? null];
  }
  const choices = a.frames.length > 0 ? a.frames.map((f) => f.data?.choices?.[0]).filter(Boolean) : [a.json?.choices?.[0]];
  return choices.findLast((c: any) => c?.finish_reason)?.finish_reason ?? null;
}

function usageOf(last: any): unknown {
  return last?.usage ?? null;
}
