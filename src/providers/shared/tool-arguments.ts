/**
 * A tool call's arguments (JSON text as the IR carries them) as the object an upstream that takes
 * parsed input wants (Anthropic `input`, Gemini `args`): empty or unparsable text, or JSON that is
 * not an object, becomes `{}` (the upstream would refuse anything else).
 */
export function toolArgumentsObject(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(args);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
