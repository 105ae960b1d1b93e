import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { FakeUpstream, FakeUpstreamOptions } from '../../tools/fake-upstream/index.js';
import { startFakeGateway, type FakeGateway, type TestGateway, type TestGatewayOptions } from './gateway.js';

/** The gateway in front of the fake upstream, and the official SDK clients of the three protocols. */
export interface SdkGateway {
  fake: FakeUpstream;
  gw: TestGateway;
  /** Chat completions and Responses. */
  openai: OpenAI;
  /** Messages. */
  anthropic: Anthropic;
}

export interface SdkGatewayOptions {
  fake?: FakeUpstreamOptions;
  /** The clients' fetch (a recording one, to read the raw stream). */
  fetch?: typeof fetch;
  /** Runs before the start (environment the gateway reads); returns how to undo it. */
  setup?: () => () => void;
}

/**
 * For one test file: starts the fake upstream and a gateway on the catalog `gatewayOptions`
 * derives from it before the file's tests, resets the fake's script before each test, and closes
 * both after. The returned object is filled in once the file's `beforeAll` has run.
 */
export function useSdkGateway(gatewayOptions: (fake: FakeUpstream) => TestGatewayOptions, opts: SdkGatewayOptions = {}): SdkGateway {
  const sdk = {} as SdkGateway;
  let started: FakeGateway | undefined;
  let undo: (() => void) | undefined;
  beforeAll(async () => {
    undo = opts.setup?.();
    started = await startFakeGateway(gatewayOptions, opts.fake);
    const { fake, gw } = started;
    const fetchOption = opts.fetch ? { fetch: opts.fetch } : {};
    Object.assign(sdk, {
      fake,
      gw,
      openai: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0, ...fetchOption }),
      anthropic: new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0, ...fetchOption }),
    });
  });
  beforeEach(() => sdk.fake.reset());
  afterAll(async () => {
    await started?.close();
    undo?.();
  });
  return sdk;
}
