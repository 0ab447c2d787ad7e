/**
 * Rollout hashing as the official SDKs do it: MurmurHash3 (x86, 32 bits) of `groupId:id`, taken
 * modulo 100 for rollout percentages (seed 0) or modulo the total weight for variants (seed
 * 86028157), plus one. The Node SDK's murmurhash3js reads each UTF-16 code unit's low byte, not
 * UTF-8 bytes, so that is what is hashed here too: a non-ASCII user id lands in the same bucket.
 */
const mix = (h1: number, k1: number) => {
  k1 = Math.imul(k1, 0xcc9e2d51)
  k1 = (k1 << 15) | (k1 >>> 17)
  k1 = Math.imul(k1, 0x1b873593)
  h1 ^= k1
  h1 = (h1 << 13) | (h1 >>> 19)
  return (Math.imul(h1, 5) + 0xe6546b64) | 0
}

/** The state after the 4-char blocks of `key` from `from` to `to` (a multiple of 4 apart), continuing from `h1`. */
function blocks(key: string, h1: number, from: number, to: number): number {
  for (let i = from; i < to; i += 4) {
    h1 = mix(
      h1,
      (key.charCodeAt(i) & 0xff) |
        ((key.charCodeAt(i + 1) & 0xff) << 8) |
        ((key.charCodeAt(i + 2) & 0xff) << 16) |
        ((key.charCodeAt(i + 3) & 0xff) << 24),
    )
  }
  return h1
}

/** The tail (the 0–3 chars of `key` from `from`) and the finalisation; `length` is the whole key's. */
function finish(key: string, from: number, h1: number, length: number): number {
  let k1 = 0
  switch (key.length - from) {
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: murmurhash3 adds the tail bytes from the last down
    case 3:
      k1 ^= (key.charCodeAt(from + 2) & 0xff) << 16
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: as above
    case 2:
      k1 ^= (key.charCodeAt(from + 1) & 0xff) << 8
    case 1:
      k1 ^= key.charCodeAt(from) & 0xff
      k1 = Math.imul(k1, 0xcc9e2d51)
      k1 = (k1 << 15) | (k1 >>> 17)
      k1 = Math.imul(k1, 0x1b873593)
      h1 ^= k1
  }
  h1 ^= length
  h1 ^= h1 >>> 16
  h1 = Math.imul(h1, 0x85ebca6b)
  h1 ^= h1 >>> 13
  h1 = Math.imul(h1, 0xc2b2ae35)
  h1 ^= h1 >>> 16
  return h1 >>> 0
}

/**
 * The hash of `groupId:id` for any id, with the whole 4-char blocks of `groupId:` hashed once (a
 * flag's group is fixed when it is compiled; only the id comes with the request), and without
 * making the joined text per request.
 */
function hasher(groupId: string, seed: number): (id: string) => number {
  const prefix = `${groupId}:`
  const whole = prefix.length & ~3
  const start = blocks(prefix, seed | 0, 0, whole)
  const rest = prefix.slice(whole)
  const r = rest.length
  const charOf = (id: string, i: number) => (i < r ? rest.charCodeAt(i) : id.charCodeAt(i - r)) & 0xff
  return id => {
    const length = whole + r + id.length
    if (r + id.length < 4) return finish(rest + id, 0, start, length)
    let h1 = start
    let from = 0
    if (r > 0) {
      // The block that straddles the end of the prefix and the start of the id.
      h1 = mix(h1, charOf(id, 0) | (charOf(id, 1) << 8) | (charOf(id, 2) << 16) | (charOf(id, 3) << 24))
      from = 4 - r
    }
    const end = from + ((id.length - from) & ~3)
    return finish(id, end, blocks(id, h1, from, end), length)
  }
}

/** 1–100: the bucket of an id in a rollout of `groupId`. */
export function rolloutBucket(groupId: string): (id: string) => number {
  const hash = hasher(groupId, 0)
  return id => (hash(id) % 100) + 1
}

const VARIANT_SEED = 86028157

/** 1–`total`: where an id falls in the variants of `groupId` whose weights add up to `total`. */
export function variantBucket(groupId: string, total: number): (id: string) => number {
  const hash = hasher(groupId, VARIANT_SEED)
  return id => (hash(id) % total) + 1
}
