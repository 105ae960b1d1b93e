/**
 * Client-facing ids derive from the gateway's request id (never from a clock or RNG), so a
 * response, its stream chunks and the ledger row share one id, and a fallback keeps it stable.
 */
export function prefixedId(prefix: string, requestId: string): string {
  return requestId.startsWith(prefix) ? requestId : prefix + requestId;
}

export const chatCompletionId = (requestId: string) => prefixedId('chatcmpl-', requestId);
export const messageId = (requestId: string) => prefixedId('msg_', requestId);
