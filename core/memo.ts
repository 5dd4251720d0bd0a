// A memo of answers that repeat (keys of JSON bodies, Content-Types, header
// names), bounded because a peer may make every key new: when full it starts
// over. One such memo, where the diff, the capture and the media-type tests
// each kept their own copy of the same few lines.

/** A Map that forgets everything once it holds `max` entries. */
export class BoundedMemo<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  /** Remembers `value` for `key` (starting over first when full); `value` back. */
  set(key: K, value: V): V {
    if (this.map.size >= this.max) this.map.clear();
    this.map.set(key, value);
    return value;
  }

  get size(): number {
    return this.map.size;
  }
}
