import { anthropicMessages } from './wires/anthropic-messages.js';
import { azureOpenai } from './wires/azure-openai.js';
import { bedrock } from './wires/bedrock.js';
import { googleGemini } from './wires/google-gemini.js';
import { openaiChat } from './wires/openai-chat.js';
import { openaiResponses } from './wires/openai-responses.js';
import { vertexAnthropic } from './wires/vertex-anthropic.js';
import type { FakeWire, WireCall } from './wires/wire.js';

/**
 * The wire protocols the fake upstream speaks, one module each under `wires/`. A request goes to
 * the first whose `match` takes its path, so the ones that name the model in the path come before
 * the suffix matches (`.../publishers/anthropic/models/m:rawPredict` is not `/messages`).
 * A new provider's fake: its module, and one line here.
 */
export const WIRES: readonly FakeWire[] = [googleGemini, bedrock, vertexAnthropic, azureOpenai, openaiChat, anthropicMessages, openaiResponses];

export function wireForPath(pathname: string): { wire: FakeWire; call: WireCall } | undefined {
  for (const wire of WIRES) {
    const call = wire.match(pathname);
    if (call) return { wire, call };
  }
  return undefined;
}
