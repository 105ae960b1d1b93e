/**
 * Token usage, with the cache split and the reasoning share kept apart, and what else a provider
 * bills by: the cache writes' lifetimes, tokens of other modalities, server-tool uses and the
 * service tier that served the request.
 * Input total = noCache + cacheRead + cacheWrite. Output total includes reasoning.
 */
export interface Usage {
  input: {
    noCache: number;
    cacheRead: number;
    cacheWrite: number;
    /** The part of `cacheWrite` written for one hour (Anthropic's `ephemeral_1h`); the rest lives 5 minutes. */
    cacheWrite1h?: number;
    /** The parts of `noCache` that are audio or image tokens, where the provider reports them. */
    audio?: number;
    image?: number;
  };
  output: {
    total: number;
    reasoning: number;
    /** The parts of `total` that are audio or image tokens. */
    audio?: number;
    image?: number;
  };
  /** Uses of server tools the provider bills per use, by tool (`web_search`, `web_fetch`, `code_execution`). */
  serverTools?: Record<string, number>;
  /** The service tier that served the request, as the answer names it (`flex`, `priority`, `standard`, ...). */
  serviceTier?: string;
}

export function emptyUsage(): Usage {
  return { input: { noCache: 0, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, reasoning: 0 } };
}

export function inputTotal(u: Usage): number {
  return u.input.noCache + u.input.cacheRead + u.input.cacheWrite;
}

function addOptional(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);
}

/** Optional counts stay absent when neither side has them. */
function defined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as Array<keyof T>) if (o[k] === undefined) delete o[k];
  return o;
}

export function addUsage(a: Usage, b: Usage): Usage {
  const out: Usage = {
    input: defined({
      noCache: a.input.noCache + b.input.noCache,
      cacheRead: a.input.cacheRead + b.input.cacheRead,
      cacheWrite: a.input.cacheWrite + b.input.cacheWrite,
      cacheWrite1h: addOptional(a.input.cacheWrite1h, b.input.cacheWrite1h),
      audio: addOptional(a.input.audio, b.input.audio),
      image: addOptional(a.input.image, b.input.image),
    }),
    output: defined({
      total: a.output.total + b.output.total,
      reasoning: a.output.reasoning + b.output.reasoning,
      audio: addOptional(a.output.audio, b.output.audio),
      image: addOptional(a.output.image, b.output.image),
    }),
  };
  if (a.serverTools || b.serverTools) {
    const tools: Record<string, number> = { ...a.serverTools };
    for (const [k, n] of Object.entries(b.serverTools ?? {})) tools[k] = (tools[k] ?? 0) + n;
    out.serverTools = tools;
  }
  const tier = b.serviceTier ?? a.serviceTier;
  if (tier !== undefined) out.serviceTier = tier;
  return out;
}

/**
 * Nanodollars as a USD decimal (`1234567` -> `"0.001234567"`), exact: what clients read as
 * `usage.cost` (OpenRouter's field, in USD) and `x-switchyard-cost`.
 */
export function nanosToUsd(nanos: bigint): string {
  const sign = nanos < 0n ? '-' : '';
  const abs = nanos < 0n ? -nanos : nanos;
  const whole = abs / 1_000_000_000n;
  const frac = (abs % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${sign}${whole}${frac ? `.${frac}` : ''}`;
}
