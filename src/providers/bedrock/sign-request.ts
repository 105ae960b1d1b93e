import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { GatewayError } from '../../ir/index.js';
import type { ProviderConfig } from '../types.js';
import { bedrockOptions, SIGNING_SERVICE } from './api.js';

/**
 * AWS Signature Version 4 for Bedrock requests, over the exact bytes sent. Credentials come from
 * the AWS SDK's default chain (environment variables, the shared config and credentials files
 * with `profile`, SSO, web identity, container and instance roles), resolved at the first call
 * and refreshed by the chain when they expire; one chain per provider and profile.
 */
type CredentialChain = ReturnType<typeof defaultProvider>;
const chains = new Map<string, CredentialChain>();

function credentialsFor(provider: ProviderConfig, profile: string | undefined): CredentialChain {
  const key = `${provider.id}\u0000${profile ?? ''}`;
  let chain = chains.get(key);
  if (!chain) {
    chain = defaultProvider(profile ? { profile } : {});
    chains.set(key, chain);
  }
  return chain;
}

/** Forget every credential chain (tests that change the environment's credentials). */
export function resetCredentialChains(): void {
  chains.clear();
}

export type Signer = (request: { url: string; headers: Record<string, string>; body: string }) => Promise<Record<string, string>>;

/** The `sign` of a Bedrock exchange: the headers SigV4 adds (authorization, x-amz-date, ...). */
export function sigV4Signer(provider: ProviderConfig, now: () => Date = () => new Date()): Signer {
  const { region, profile } = bedrockOptions(provider);
  const credentials = credentialsFor(provider, profile);
  const signer = new SignatureV4({ service: SIGNING_SERVICE, region, credentials: () => resolve(credentials, profile), sha256: Sha256 });
  return async ({ url, headers, body }) => {
    const u = new URL(url);
    const request = {
      method: 'POST',
      protocol: u.protocol,
      hostname: u.hostname,
      ...(u.port ? { port: Number(u.port) } : {}),
      path: u.pathname,
      query: Object.fromEntries(u.searchParams),
      // The Host header undici sends, signed like every other header of the request.
      headers: { ...lower(headers), host: u.host } as Record<string, string>,
      body,
    };
    const signed = await signer.sign(request, { signingDate: now() });
    const added: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) {
      if (name !== 'host' && request.headers[name] !== value) added[name] = value;
    }
    return added;
  };
}

async function resolve(chain: CredentialChain, profile: string | undefined) {
  try {
    return await chain();
  } catch (e) {
    // No credentials anywhere is the gateway's configuration, not the client's request.
    throw new GatewayError('api_error', `no AWS credentials for Bedrock${profile ? ` (profile "${profile}")` : ''}: ${(e as Error).message}`, {
      code: 'credentials_unavailable',
      cause: e,
    });
  }
}

function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}
