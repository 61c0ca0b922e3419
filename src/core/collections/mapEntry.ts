/**
 * The value under `key` in `map`, made by `make` and kept the first time it is asked for. The
 * per-request lookups of label sets and counters go through nested maps this way, keyed by the
 * strings at hand rather than by a key string built per request. `make` should be made once (a
 * module constant such as `newMap`), not a closure per call.
 */
export function mapEntry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** An empty map: `make` for a level of nested maps. */
export const newMap = <K, V>(): Map<K, V> => new Map<K, V>();
