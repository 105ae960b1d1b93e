import type { Telemetry, TelemetryOptions } from './types.js';

/** The variables that ask for an export (the OpenTelemetry SDK's own; any of them turns telemetry on). */
const REQUESTING = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT',
  'OTEL_TRACES_EXPORTER',
  'OTEL_METRICS_EXPORTER',
  'OTEL_LOGS_EXPORTER',
];

/**
 * On when an OTEL_* variable names an exporter or an endpoint and OTEL_SDK_DISABLED is not true.
 * Every exporter set to `none` is off too.
 */
export function telemetryRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER', 'OTEL_LOGS_EXPORTER'].map((n) => env[n]?.trim());
  if (exporters.every((e) => e === 'none')) return false;
  return REQUESTING.some((name) => (env[name]?.trim() ?? '') !== '');
}

/**
 * Starts the OpenTelemetry SDK from the standard OTEL_* variables, or answers undefined when none
 * asks for it: the SDK is then never loaded (it is imported here, only when on).
 */
export async function loadTelemetry(env: NodeJS.ProcessEnv, opts: TelemetryOptions): Promise<Telemetry | undefined> {
  if (!telemetryRequested(env)) return undefined;
  const { startOtel } = await import('./otel/start-otel.js');
  return startOtel(env, opts);
}
