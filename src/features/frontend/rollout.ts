/**
 * Rollout hashing as the official SDKs do it: MurmurHash3 (x86, 32 bits) of `groupId:id`, taken
 * modulo 100 for rollout percentages (seed 0) or modulo the total weight for variants (seed
 * 86028157), plus one. The Node SDK's murmurhash3js reads each UTF-16 code unit's low byte, not
 * UTF-8 bytes, so that is what is hashed here too: a non-ASCII user id lands in the same bucket.
 */
function murmur32(key: string, seed: number): number {
  const remainder = key.length & 3
  const bytes = key.length - remainder
  let h1 = seed | 0
  let k1: number
  let i = 0
  for (; i < bytes; i += 4) {
    k1 = (key.charCodeAt(i) & 0xff) | ((key.charCodeAt(i + 1) & 0xff) << 8) | ((key.charCodeAt(i + 2) & 0xff) << 16) | ((key.charCodeAt(i + 3) & 0xff) << 24)
    k1 = Math.imul(k1, 0xcc9e2d51)
    k1 = (k1 << 15) | (k1 >>> 17)
    k1 = Math.imul(k1, 0x1b873593)
    h1 ^= k1
    h1 = (h1 << 13) | (h1 >>> 19)
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0
  }
  k1 = 0
  switch (remainder) {
    case 3:
      k1 ^= (key.charCodeAt(i + 2) & 0xff) << 16
    // falls through
    case 2:
      k1 ^= (key.charCodeAt(i + 1) & 0xff) << 8
    // falls through
    case 1:
      k1 ^= key.charCodeAt(i) & 0xff
      k1 = Math.imul(k1, 0xcc9e2d51)
      k1 = (k1 << 15) | (k1 >>> 17)
      k1 = Math.imul(k1, 0x1b873593)
      h1 ^= k1
  }
  h1 ^= key.length
  h1 ^= h1 >>> 16
  h1 = Math.imul(h1, 0x85ebca6b)
  h1 ^= h1 >>> 13
  h1 = Math.imul(h1, 0xc2b2ae35)
  h1 ^= h1 >>> 16
  return h1 >>> 0
}

/** 1–100: the bucket of `id` in a rollout of `groupId`. */
export function rolloutBucket(id: string, groupId: string): number {
  return (murmur32(`${groupId}:${id}`, 0) % 100) + 1
}

const VARIANT_SEED = 86028157

/** 1–`total`: where `id` falls in the variants of `groupId` whose weights add up to `total`. */
export function variantBucket(id: string, groupId: string, total: number): number {
  return (murmur32(`${groupId}:${id}`, VARIANT_SEED) % total) + 1
}
