/** One rate limit of the calling key, as the protocols' rate-limit headers show it. */
export interface BucketStatus {
  limit: number;
  /** Requests that would be admitted now, or tokens that could be used now. */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

/** The calling key's limits after its request; a limit it does not have is absent. */
export interface RateLimitStatus {
  requests?: BucketStatus;
  tokens?: BucketStatus;
}
