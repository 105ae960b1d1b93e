import { emptyUsage, type Finish, type ReasoningOrigin, type Usage } from '../../ir/index.js';
import { isObject, num, str, type Json } from '../shared/read-json.js';
import { GEMINI_FAMILY } from './api.js';

/** What one candidate says beside its parts: why it finished, the usage so far, whose reasoning it is. */

/** Finish reasons that mean the answer was withheld: a refusal, so refusal fallback applies. */
const REFUSALS = new Set([
  'SAFETY',
  'RECITATION',
  'PROHIBITED_CONTENT',
  'BLOCKLIST',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/**
 * A candidate's `finishReason` -> IR finish. Gemini has no tool-call reason: a turn that ends in
 * function calls says `STOP`, so the calls decide. A refusal keeps `finishMessage` as its
 * explanation and the ratings that blocked it.
 */
export function decodeFinish(candidate: Json, sawToolCall: boolean): Finish {
  const raw = str(candidate.finishReason);
  if (raw === 'STOP') return { unified: sawToolCall ? 'tool-calls' : 'stop', raw };
  if (raw === 'MAX_TOKENS') return { unified: 'length', raw };
  if (REFUSALS.has(raw)) {
    const ratings = Array.isArray(candidate.safetyRatings) ? candidate.safetyRatings.filter((r) => isObject(r) && r.blocked === true) : [];
    const details: Json = {
      ...(str(candidate.finishMessage) ? { explanation: str(candidate.finishMessage) } : {}),
      ...(ratings.length > 0 ? { safetyRatings: ratings } : {}),
    };
    return { unified: 'refusal', raw, ...(Object.keys(details).length > 0 ? { details } : {}) };
  }
  return { unified: 'other', ...(raw ? { raw } : {}) };
}

/** A prompt blocked before generation (`promptFeedback.blockReason`, no candidates): a refusal. */
export function blockedPrompt(feedback: Json): Finish {
  const message = str(feedback.blockReasonMessage);
  return {
    unified: 'refusal',
    raw: str(feedback.blockReason),
    details: { blockReason: str(feedback.blockReason), ...(message ? { explanation: message } : {}) },
  };
}

/**
 * `usageMetadata` (a cumulative snapshot in every chunk) -> IR usage. `promptTokenCount` includes
 * the cached tokens; tool-use prompt tokens are input too; `candidatesTokenCount` excludes the
 * thinking tokens, which are output. The audio and image tokens among the uncached prompt
 * (`promptTokensDetails` less `cacheTokensDetails`, by modality) and among the answer
 * (`candidatesTokensDetails`) are counted apart, for prices that differ by modality.
 */
export function decodeUsage(u: Json): Usage {
  const cached = num(u.cachedContentTokenCount);
  const thoughts = num(u.thoughtsTokenCount);
  const usage = emptyUsage();
  usage.input.noCache = Math.max(0, num(u.promptTokenCount) - cached) + num(u.toolUsePromptTokenCount);
  usage.input.cacheRead = cached;
  usage.output.total = num(u.candidatesTokenCount) + thoughts;
  usage.output.reasoning = thoughts;
  const uncached = (modality: string) => Math.max(0, byModality(u.promptTokensDetails, modality) - byModality(u.cacheTokensDetails, modality));
  const audioIn = Math.min(uncached('AUDIO'), usage.input.noCache);
  const imageIn = Math.min(uncached('IMAGE'), usage.input.noCache - audioIn);
  if (audioIn) usage.input.audio = audioIn;
  if (imageIn) usage.input.image = imageIn;
  const audioOut = byModality(u.candidatesTokensDetails, 'AUDIO');
  const imageOut = byModality(u.candidatesTokensDetails, 'IMAGE');
  if (audioOut) usage.output.audio = audioOut;
  if (imageOut) usage.output.image = imageOut;
  return usage;
}

/** The tokens of one modality in a `[{modality, tokenCount}]` list. */
function byModality(details: unknown, modality: string): number {
  if (!Array.isArray(details)) return 0;
  return details.reduce((sum: number, d) => sum + (isObject(d) && d.modality === modality ? num(d.tokenCount) : 0), 0);
}

/** Gemini's thought signatures are bound to Gemini (and the model): they go back only there. */
export function reasoningOrigin(model: string | undefined): ReasoningOrigin {
  return { provider: GEMINI_FAMILY, ...(model ? { model } : {}), opaque: true };
}
