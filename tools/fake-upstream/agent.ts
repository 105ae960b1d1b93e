/**
 * A scripted coding-agent model, for driving real agent CLIs (Claude Code, Codex) through the
 * gateway: the scenario `{ agent: true }`. It reads the conversation in whichever protocol the
 * gateway speaks to it:
 * - the last user text holds `RUN: <command>` and the request offers a shell tool (Claude Code's
 *   `Bash`, Codex's `shell`, `shell_command` or `exec_command`): it calls that tool with the command,
 *   after a signed thinking block when Anthropic's thinking is asked for, or with a thought signature
 *   on Gemini's function call (as Gemini's thinking models sign theirs), so a test can check that
 *   the agent sends it back, signature intact, with the tool's result;
 * - the last turn is that tool's result: it answers `RESULT: <last line of the result>` (agents put
 *   their own headers first), so a test
 *   sees that the command ran on the client and its output travelled back upstream;
 * - anything else (titles, summaries, a plain question): `OK: <the question's first words>`.
 */
import type { Thinking, ToolCall } from './generate.js';
import type { WireProtocol } from './wires/wire.js';

type Json = Record<string, unknown>;

export interface AgentAnswer {
  text: string;
  toolCall?: ToolCall;
  thinking?: Thinking;
}

const SHELL_TOOLS = ['Bash', 'shell', 'shell_command', 'exec_command'];

export function agentTurn(protocol: WireProtocol, body: Json): AgentAnswer {
  const turns = conversation(protocol, body);
  const last = turns.at(-1);
  if (last?.kind === 'tool-result') return { text: `RESULT: ${last.text.trim().split('\n').at(-1) ?? ''}` };
  const userText = last?.kind === 'user' ? last.text : '';
  const command = /RUN: (.+)$/m.exec(userText)?.[1]?.trim();
  const tool = offeredTools(protocol, body).find((t) => SHELL_TOOLS.includes(t.name));
  if (command && tool) {
    const id = `call_agent_${turns.length}`;
    const toolCall = { id, name: tool.name, arguments: JSON.stringify(shellArguments(tool.schema, command)) };
    return { text: 'Running it.', toolCall, thinking: thinks(protocol, body) ? { text: `The user wants \`${command}\` run; the shell tool does that.`, signature: `agent-signature-${id}` } : undefined };
  }
  return { text: `OK: ${userText.replace(/<[^>]+>[^<]*<\/[^>]+>/g, '').trim().split(/\s+/).slice(0, 6).join(' ')}` };
}

/**
 * Anthropic's thinking asked for (enabled or adaptive): the tool call comes after a signed thinking
 * block. Gemini's thinking models sign every function call (the signature rides on its part).
 */
function thinks(protocol: WireProtocol, body: Json): boolean {
  if (protocol === 'google-gemini') return true;
  const type = (body.thinking as Json | undefined)?.type;
  return protocol === 'anthropic-messages' && (type === 'enabled' || type === 'adaptive');
}

interface Turn {
  kind: 'user' | 'assistant' | 'tool-result';
  text: string;
}

/** The conversation as user text, assistant turns and tool results, in any of the four protocols. */
function conversation(protocol: WireProtocol, body: Json): Turn[] {
  if (protocol === 'google-gemini') {
    return asArray(body.contents).map((c): Turn => {
      const parts = asArray(c.parts);
      const result = parts.map((p) => p.functionResponse as Json | undefined).find((r) => r !== undefined);
      if (result) return { kind: 'tool-result', text: textOf([(result.response ?? {}) as Json].map((r) => ({ text: String(r.output ?? r.error ?? '') }))) };
      return { kind: c.role === 'model' ? 'assistant' : 'user', text: textOf(parts.filter((p) => p.thought !== true)) };
    });
  }
  if (protocol === 'openai-responses') {
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : asArray(body.input);
    return input.map((item): Turn => {
      if (item.type === 'function_call_output') return { kind: 'tool-result', text: textOf(item.output) };
      return { kind: item.role === 'user' ? 'user' : 'assistant', text: textOf(item.content) };
    });
  }
  return asArray(body.messages).map((m): Turn => {
    if (m.role === 'tool') return { kind: 'tool-result', text: textOf(m.content) };
    const blocks = asArray(m.content);
    const result = blocks.find((b) => b.type === 'tool_result');
    if (m.role === 'user' && result) return { kind: 'tool-result', text: textOf(result.content) };
    return { kind: m.role === 'user' ? 'user' : 'assistant', text: textOf(m.content) };
  });
}

function offeredTools(protocol: WireProtocol, body: Json): Array<{ name: string; schema: Json }> {
  const tools = protocol === 'google-gemini' ? asArray(body.tools).flatMap((t) => asArray(t.functionDeclarations)) : asArray(body.tools);
  return tools.map((t) => {
    const fn = protocol === 'openai-chat' ? (t.function as Json | undefined) ?? {} : t;
    const schema = (fn.input_schema ?? fn.parameters ?? fn.parametersJsonSchema ?? {}) as Json;
    return { name: String(fn.name ?? ''), schema };
  });
}

/** Arguments in the shape the tool's schema asks for: a string command, an argv array, or `cmd`. */
function shellArguments(schema: Json, command: string): Json {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const args: Json = {};
  if (props.cmd) args.cmd = command;
  else if (props.command?.type === 'array') args.command = ['bash', '-lc', command];
  else args.command = command;
  if (props.description) args.description = 'Run the command the user asked for';
  return args;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => (typeof part.text === 'string' ? part.text : typeof part.content === 'string' ? part.content : ''))
    .join('\n');
}

function asArray(v: unknown): Json[] {
  return Array.isArray(v) ? (v.filter((x) => x !== null && typeof x === 'object') as Json[]) : [];
}
