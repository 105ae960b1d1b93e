/** Raised for any problem in the config; the message names the bad entry. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
