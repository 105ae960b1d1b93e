// Fails when code outside src/providers/ names what only a provider reads: a kind's own config
// fields (max_tokens_field, a fast variant's settings, the local models' pace), or a provider
// kind compared by name. Such facts are declared by the provider (Provider.options: fields,
// modelFields, fastFields; Provider.capabilities(target); Provider.builtIn) and travel opaque
// (ProviderConfig.options, Target.modelOptions). The import side of the same boundary is
// .dependency-cruiser.cjs's `provider-folders-stay-inside`.
// Usage: node tools/check-provider-fields.mjs [root (default src)]
import { linesOutside } from './source-files.mjs';

const root = process.argv[2] ?? 'src';
/** Where a provider's own facts may be named: its folder (and the shared provider code). */
const ALLOWED = [/^providers\//];
/** Fields only a provider reads, as config keys or as the typed fields they used to be. */
const FIELDS = /\b(max_tokens_field|maxTokensField|fastOptions|tokens_per_second|tokensPerSecond|pace_whole_answers|paceWholeAnswers)\b/;
/** A provider kind compared by name (`provider.type === 'local'`). */
const KIND_CHECK = /\btype\s*[!=]==?\s*['"](openai|openai-responses|anthropic|local|gemini|bedrock|vertex-anthropic|vertex-gemini)['"]/;

const problems = linesOutside(root, ALLOWED, [FIELDS, KIND_CHECK]);
if (problems.length > 0) {
  console.error(`provider facts outside src/providers/ (declare them on the provider: Provider.options, capabilities(target), builtIn):\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('provider facts: only in src/providers/');
