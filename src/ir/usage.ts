/**
 * Token usage, with the cache split and the reasoning share kept apart.
 * Input total = noCache + cacheRead + cacheWrite. Output total includes reasoning.
 */
export interface Usage {
  input: { noCache: number; cacheRead: number; cacheWrite: number };
  output: { total: number; reasoning: number };
}

export function emptyUsage(): Usage {
  return { input: { noCache: 0, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, reasoning: 0 } };
}

export function inputTotal(u: Usage): number {
  return u.input.noCache + u.input.cacheRead + u.input.cacheWrite;
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input: {
      noCache: a.input.noCache + b.input.noCache,
      cacheRead: a.input.cacheRead + b.input.cacheRead,
      cacheWrite: a.input.cacheWrite + b.input.cacheWrite,
    },
    output: { total: a.output.total + b.output.total, reasoning: a.output.reasoning + b.output.reasoning },
  };
}
