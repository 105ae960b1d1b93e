import { Agent } from 'undici';
import type { ProviderConfig } from '../types.js';

/**
 * One pooled keep-alive Agent per provider config, created on first use. Timeouts live on the
 * Agent: connect = connectMs, headers = firstByteMs, body idle gap = idleMs.
 */
const agents = new Map<string, { config: ProviderConfig; agent: Agent }>();

export function agentFor(provider: ProviderConfig): Agent {
  const hit = agents.get(provider.id);
  if (hit && sameTransport(hit.config, provider)) return hit.agent;
  // A reloaded config with other timeouts gets a fresh Agent; the old one drains on its own.
  if (hit) void hit.agent.close().catch(() => undefined);
  const agent = new Agent({
    connect: { timeout: provider.timeouts.connectMs },
    headersTimeout: provider.timeouts.firstByteMs,
    bodyTimeout: provider.timeouts.idleMs,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
  });
  agents.set(provider.id, { config: provider, agent });
  return agent;
}

function sameTransport(a: ProviderConfig, b: ProviderConfig): boolean {
  return (
    a.baseUrl === b.baseUrl &&
    a.timeouts.connectMs === b.timeouts.connectMs &&
    a.timeouts.firstByteMs === b.timeouts.firstByteMs &&
    a.timeouts.idleMs === b.timeouts.idleMs
  );
}

/** Close every Agent (shutdown, tests). */
export async function closeAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map((a) => a.agent.close().catch(() => undefined)));
}
