/**
 * Streams whose maker says when they end (closed, failed or cancelled): the server follows their end
 * without piping each one through one more TransformStream, a JS step per chunk.
 */
interface EndState {
  ended: boolean;
  watchers: Array<() => void>;
}

const states = new WeakMap<ReadableStream, EndState>();

/** The maker's side: `stream` will report its end; call the returned function once it has ended (again is a no-op). */
export function reportsItsEnd(stream: ReadableStream): () => void {
  const state: EndState = { ended: false, watchers: [] };
  states.set(stream, state);
  return () => {
    if (state.ended) return;
    state.ended = true;
    for (const watcher of state.watchers.splice(0)) watcher();
  };
}

/**
 * The server's side: runs `onEnd` once the stream has ended (at once when it already has). False
 * when the stream does not report its end: the caller must watch it some other way.
 */
export function whenStreamEnds(stream: ReadableStream, onEnd: () => void): boolean {
  const state = states.get(stream);
  if (!state) return false;
  if (state.ended) onEnd();
  else state.watchers.push(onEnd);
  return true;
}
