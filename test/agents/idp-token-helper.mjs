/**
 * Claude Code's `apiKeyHelper` as an organisation would roll it out: the user signed in once (a
 * browser sign-in that left a refresh token in the state file); each time Claude Code asks, this
 * exchanges the refresh token at the identity provider's token endpoint (RFC 6749 §6), keeps the
 * rotated one, and prints the fresh access token for Claude Code to send to the gateway.
 *
 * Usage: node idp-token-helper.mjs <state.json>, the file holding
 * { token_endpoint, client_id, refresh_token }; `printed` counts the tokens handed out.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const stateFile = process.argv[2];
if (!stateFile) {
  console.error('usage: idp-token-helper.mjs <state.json>');
  process.exit(2);
}
const state = JSON.parse(readFileSync(stateFile, 'utf8'));
const res = await fetch(state.token_endpoint, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: state.refresh_token, client_id: state.client_id }).toString(),
});
const body = await res.json();
if (!res.ok || typeof body.access_token !== 'string') {
  console.error(`the identity provider refused the refresh: ${res.status} ${body.error ?? ''} ${body.error_description ?? ''}`);
  process.exit(1);
}
state.refresh_token = body.refresh_token ?? state.refresh_token;
state.printed = (state.printed ?? 0) + 1;
writeFileSync(stateFile, JSON.stringify(state));
process.stdout.write(`${body.access_token}\n`);
