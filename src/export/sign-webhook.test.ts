import { describe, expect, it } from 'vitest';
import { parseWebhookSecret, signWebhook } from './sign-webhook.js';

describe('Standard Webhooks signature', () => {
  it('reproduces the published test vector (what a receiver\'s library verifies)', () => {
    const key = parseWebhookSecret('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'SECRET');
    expect(signWebhook(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs the id, the timestamp and the body: a change to any is another signature', () => {
    const key = parseWebhookSecret(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, 'SECRET');
    const base = signWebhook(key, 'msg_a', 1, '{}');
    expect(signWebhook(key, 'msg_b', 1, '{}')).not.toBe(base);
    expect(signWebhook(key, 'msg_a', 2, '{}')).not.toBe(base);
    expect(signWebhook(key, 'msg_a', 1, '{ }')).not.toBe(base);
  });

  it('refuses a secret that is not whsec_ and the base64 of 24 to 64 bytes, naming the variable', () => {
    const bytes = (n: number) => `whsec_${Buffer.alloc(n, 1).toString('base64')}`;
    for (const bad of ['', 'plain-secret', Buffer.alloc(32).toString('base64'), 'whsec_', 'whsec_not*base64', bytes(23), bytes(65)]) {
      expect(() => parseWebhookSecret(bad, 'SWITCHYARD_USAGE_WEBHOOK_SECRET'), bad).toThrow(/^SWITCHYARD_USAGE_WEBHOOK_SECRET must be "whsec_"/);
    }
    expect(parseWebhookSecret(bytes(24), 'S')).toHaveLength(24);
    expect(parseWebhookSecret(bytes(64), 'S')).toHaveLength(64);
  });
});
