import { invalid } from '../../ir/errors.js';
import { allowedTools, type Tool, type ToolChoice } from '../../ir/request.js';
import { isRecord, type JsonObject } from './json.js';

/**
 * Anthropic's rule. OpenAI's is the same set of characters up to 64 of them; a longer name sent to
 * an OpenAI upstream gets that upstream's own 400.
 */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/**
 * What every provider refuses about function tools, refused here with a 400 in the client's
 * protocol before anything is held: a name outside the common rule, two tools with one name, and
 * a tool_choice naming a tool that is not there. A model could otherwise be asked for a tool
 * whose call its clients' SDKs cannot take back. `otherNames` are the names of the request's
 * other tools (Anthropic server tools): they share the name space, and tool_choice may name them.
 */
export function checkTools(
  tools: Tool[],
  choice: ToolChoice | undefined,
  nameParam: (index: number) => string,
  choiceParam: string,
  otherNames: readonly string[] = [],
): void {
  const seen = new Set<string>(otherNames);
  tools.forEach((t, i) => {
    if (!TOOL_NAME.test(t.name)) throw invalid(`tool names must match ${TOOL_NAME.source} (got ${JSON.stringify(t.name.slice(0, 140))})`, nameParam(i));
    if (seen.has(t.name)) throw invalid(`tool names must be unique: ${t.name} appears twice`, nameParam(i));
    seen.add(t.name);
  });
  if (choice?.type === 'tool' && !seen.has(choice.name)) {
    throw invalid(`tool_choice names ${JSON.stringify(choice.name)}, which is not among the tools`, choiceParam);
  }
  const missing = allowedTools(choice)?.find((name) => !seen.has(name));
  if (missing !== undefined) throw invalid(`tool_choice allows ${JSON.stringify(missing)}, which is not among the tools`, 'tool_choice');
}

/**
 * Where the `n`-th function tool sits in the client's `tools`, for an error's param, when the list
 * also holds tools the IR keeps elsewhere (server or hosted tools).
 */
export function clientIndex(raw: unknown, n: number, isFunction: (tool: JsonObject) => boolean): number {
  const list = Array.isArray(raw) ? raw : [];
  let seen = -1;
  for (let i = 0; i < list.length; i++) {
    const t = list[i];
    if (isRecord(t) && isFunction(t) && ++seen === n) return i;
  }
  return n;
}
