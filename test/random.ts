/** A small seeded random source, so property tests are repeatable: the seed is in the test name. */
export function seededRandom(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)]
  const chance = (p: number) => next() < p
  const some = <T>(items: readonly T[], max = items.length): T[] => {
    const count = int(0, Math.min(max, items.length))
    const copy = [...items]
    const result: T[] = []
    for (let i = 0; i < count; i++) result.push(copy.splice(int(0, copy.length - 1), 1)[0])
    return result
  }
  return { next, int, pick, chance, some }
}
export type Random = ReturnType<typeof seededRandom>
