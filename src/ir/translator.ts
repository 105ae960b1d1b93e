/**
 * A stream translator is a reducer: `(state, input) -> [state, outputs]`. Decoders turn upstream
 * events into IR events; encoders turn IR events into client frames. Translators are pure: no
 * I/O, no clock, no environment; ids and time come in through `init`.
 */
export interface StreamTranslator<State, In, Out> {
  step(state: State, input: In): [State, Out[]];
  /** Called once after the last input; may flush what is pending. */
  end?(state: State): Out[];
}

/** Run a translator over a whole sequence (for tests and for non-streamed bodies). */
export function runTranslator<S, I, O>(t: StreamTranslator<S, I, O>, init: S, inputs: Iterable<I>): O[] {
  const out: O[] = [];
  let state = init;
  for (const input of inputs) {
    const [next, produced] = t.step(state, input);
    state = next;
    out.push(...produced);
  }
  if (t.end) out.push(...t.end(state));
  return out;
}
