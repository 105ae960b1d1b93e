import type { Message, Request, StreamEvent, TextPart, Usage } from '../ir/index.js';
import type { AttemptOutcome, Candidate } from '../routing/index.js';
import type { AttemptTrace, RequestTrace, TokenCounts } from '../telemetry/types.js';
import type { PipelineDeps } from './types.js';

/**
 * An attempt's span (telemetry's GenAI client span), when the request is traced: the request's
 * parameters as the conventions name them, and its messages only when the operator opted in.
 */
export function traceAttempt(deps: PipelineDeps, trace: RequestTrace | undefined, req: Request, cand: Candidate, index: number, stream: boolean): AttemptTrace | undefined {
  if (!trace) return undefined;
  return trace.attempt({
    model: cand.model.id,
    upstreamModel: cand.target.upstreamModel,
    deployment: cand.deployment.id,
    provider: deps.providers[cand.target.provider.type]?.genAiName ?? cand.target.provider.type,
    index,
    stream,
    request: {
      'gen_ai.request.max_tokens': cand.maxTokens,
      'gen_ai.request.temperature': req.temperature,
      'gen_ai.request.top_p': req.topP,
      'gen_ai.request.stop_sequences': req.stopSequences,
      'gen_ai.conversation.id': req.attribution?.session,
      'gen_ai.output.type': req.responseFormat ? 'json' : undefined,
    },
    content: trace.captureContent ? { input: req.messages.map(genAiMessage), system: req.system.length ? req.system.map(textOf) : undefined } : undefined,
  });
}

/** Ends an attempt's span: how it ended, its finish reason and the tokens it is billed for. */
export function endAttemptTrace(span: AttemptTrace | undefined, outcome: AttemptOutcome, usage: Usage | undefined, output?: OutputCapture): void {
  if (!span) return;
  const counts = usage && tokenCounts(usage);
  const out = output?.messages(outcome);
  if (outcome.kind === 'finished') {
    const refused = outcome.finish.unified === 'refusal';
    span.end({ outcome: refused ? 'refusal' : 'ok', finishReasons: [outcome.finish.raw ?? outcome.finish.unified], usage: counts, output: out });
  } else if (outcome.kind === 'failed') {
    const e = outcome.error;
    span.end({ outcome: e.code === 'content_filter' ? 'refusal' : 'error', errorType: e.code ?? e.kind, errorMessage: e.message, usage: counts, output: out });
  } else {
    span.end({ outcome: 'cancelled', errorType: 'cancelled', usage: counts, output: out });
  }
}

export function tokenCounts(u: Usage): TokenCounts {
  return {
    input: u.input.noCache + u.input.cacheRead + u.input.cacheWrite,
    output: u.output.total,
    cacheRead: u.input.cacheRead,
    cacheWrite: u.input.cacheWrite,
    reasoning: u.output.reasoning,
  };
}

/** What an attempt produced, kept for gen_ai.output.messages when content capture is on. */
export class OutputCapture {
  private text = '';
  private readonly tools = new Map<string, { id: string; name: string; arguments: string }>();

  async *watch<R>(attempt: AsyncGenerator<StreamEvent, R>): AsyncGenerator<StreamEvent, R> {
    for (;;) {
      const step = await attempt.next();
      if (step.done) return step.value;
      const ev = step.value;
      if (ev.type === 'text-delta') this.text += ev.text;
      else if (ev.type === 'tool-start') this.tools.set(ev.id, { id: ev.toolCallId, name: ev.name, arguments: '' });
      else if (ev.type === 'tool-delta') {
        const t = this.tools.get(ev.id);
        if (t) t.arguments += ev.json;
      }
      yield ev;
    }
  }

  messages(outcome: AttemptOutcome): unknown {
    const parts: unknown[] = this.text ? [{ type: 'text', content: this.text }] : [];
    for (const t of this.tools.values()) parts.push({ type: 'tool_call', id: t.id, name: t.name, arguments: parseJson(t.arguments) });
    const finish = outcome.kind === 'finished' ? (outcome.finish.raw ?? outcome.finish.unified) : 'error';
    return [{ role: 'assistant', parts, finish_reason: finish }];
  }
}

function textOf(p: TextPart): { type: 'text'; content: string } {
  return { type: 'text', content: p.text };
}

/** A message in the conventions' shape (`{role, parts: [{type: text|tool_call|tool_call_response|reasoning, ...}]}`). */
function genAiMessage(m: Message): unknown {
  const parts = m.content.map((p): unknown => {
    switch (p.type) {
      case 'text':
        return textOf(p);
      case 'tool-call':
      case 'server-tool-call':
        return { type: 'tool_call', id: p.id, name: p.name, arguments: parseJson(p.arguments) };
      case 'tool-result':
        return { type: 'tool_call_response', id: p.toolCallId, response: p.content.map((c) => (c.type === 'text' ? c.text : { type: 'image' })) };
      case 'server-tool-result':
        return { type: 'tool_call_response', id: p.toolCallId, response: p.content };
      case 'reasoning':
        return { type: 'reasoning', content: p.text };
      default:
        return { type: p.type };
    }
  });
  return { role: m.role, parts };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
