/**
 * The event-search filter parser reads `IS:value` and `IS_ANY_OF:a,b` with string operations. Random
 * filter strings must parse exactly as the seed's syntax says, checked two ways: against the old
 * regular-expression reading (fast enough on short strings, so it serves as the reference there), and
 * against value lists drawn first and then written out with padding, empty entries and repeats.
 */
import { describe, expect, test } from 'bun:test'
import { FILTER_MAX_LENGTH, FILTER_MAX_VALUES, parseEventQuery } from '../../../src/features/events/event-query'
import { ValidationError } from '../../../src/errors'
import { seededRandom, type Random } from '../../random'

/** The reading the service had before: the seed's syntax as a regular expression, then split. */
function reference(raw: string): string[] | 'invalid' {
  const match = /^(IS|IS_ANY_OF):(.*?)(,([a-zA-Z0-9_]+))*$/s.exec(raw)
  if (!match) return 'invalid'
  const rest = raw.slice(match[1].length + 1)
  const values = (match[1] === 'IS' ? [rest] : rest.split(',')).map(value => value.trim()).filter(value => value !== '')
  return [...new Set(values)]
}

function parse(parameter: string, raw: string): string[] | 'invalid' {
  try {
    return parseEventQuery({ [parameter]: raw })[parameter as 'type'] ?? []
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as ValidationError).details).toEqual([expect.objectContaining({ path: `/${parameter}` })])
    return 'invalid'
  }
}

const PIECES = [
  'IS',
  'IS:',
  'IS_ANY_OF',
  'IS_ANY_OF:',
  'is:',
  ':',
  ',',
  ',,',
  ' ',
  '\t',
  '\n',
  'a',
  'b_1',
  'feature-created',
  'x y',
  'ÄÖ',
  '🎉',
  '%',
  'ANY',
  '_OF:',
]

function randomFilter(random: Random): string {
  const parts: string[] = []
  if (random.chance(0.8)) parts.push(random.pick(['IS:', 'IS_ANY_OF:', 'IS_ANY_OF: ', 'IS :', 'IS_ANY_OF', ' IS:']))
  for (let i = random.int(0, 12); i > 0; i--) parts.push(random.pick(PIECES))
  return parts.join('')
}

describe('event-search filter parsing', () => {
  test('random short filter strings parse as the seed syntax (the old regular expression) reads them (seed 10)', () => {
    const random = seededRandom(10)
    let accepted = 0
    for (let i = 0; i < 5000; i++) {
      const raw = randomFilter(random)
      const parameter = random.pick(['type', 'feature', 'project', 'environment', 'createdBy'])
      const want = reference(raw)
      expect({ raw, got: parse(parameter, raw) }).toEqual({ raw, got: want })
      if (want !== 'invalid') accepted++
    }
    // Both outcomes are well exercised.
    expect(accepted).toBeGreaterThan(1000)
    expect(accepted).toBeLessThan(4500)
  })

  test('value lists written out with padding, empty entries and repeats come back as the distinct values, in order (seed 11)', () => {
    const random = seededRandom(11)
    for (let i = 0; i < 2000; i++) {
      const distinct = [
        ...new Set(
          Array.from({ length: random.int(1, 30) }, () =>
            random.pick(['a', 'beta', 'gamma.flag', 'x-y', 'Ü', '7', 'a b']),
          ),
        ),
      ]
      const written: string[] = []
      const given: string[] = []
      for (const value of distinct) {
        for (let n = random.int(1, 3); n > 0; n--) {
          const pad = () => random.pick(['', ' ', '  ', '\t'])
          written.push(`${pad()}${value}${pad()}`)
          given.push(value)
          if (random.chance(0.2)) written.push(random.pick(['', ' ', '\t']))
        }
      }
      // Repeats come right after the first, so the distinct values keep their order.
      const raw = `IS_ANY_OF:${written.join(',')}`
      expect({ raw, got: parse('feature', raw) }).toEqual({
        raw,
        got: given.length > FILTER_MAX_VALUES ? 'invalid' : distinct,
      })
    }
  })

  test('an IS value is taken whole, commas included, and trimmed', () => {
    const random = seededRandom(12)
    for (let i = 0; i < 500; i++) {
      const value = Array.from({ length: random.int(1, 8) }, () => random.pick(['a', ',', 'b', ' ', 'IS:', ':'])).join(
        '',
      )
      const got = parse('type', `IS:${value}`)
      expect({ value, got }).toEqual({ value, got: value.trim() === '' ? [] : [value.trim()] })
    }
  })

  test('the length cap refuses a 100 KB filter whatever it holds; the value cap counts non-empty values', () => {
    for (const raw of [`IS_ANY_OF:${'a,'.repeat(50_000)}a!`, `IS:${'x'.repeat(100_000)}`, 'y'.repeat(100_000)]) {
      let error: unknown
      try {
        parseEventQuery({ type: raw })
      } catch (thrown) {
        error = thrown
      }
      expect(error).toBeInstanceOf(ValidationError)
      // The length message, not the syntax one: nothing past the length was looked at.
      expect((error as Error).message).toBe(`type must be at most ${FILTER_MAX_LENGTH} characters, got ${raw.length}`)
    }
    const many = Array.from({ length: FILTER_MAX_VALUES }, (_, i) => `v${i}`).join(',')
    expect(parse('type', `IS_ANY_OF:${many},,, ,`)).toHaveLength(FILTER_MAX_VALUES)
    expect(parse('type', `IS_ANY_OF:${many},extra`)).toBe('invalid')
  })
})
