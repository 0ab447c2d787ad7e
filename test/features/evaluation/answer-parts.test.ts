/**
 * AnswerParts, where the protocols keep a compiled scope's parts and put answers together in
 * place (the first part's comma a space, or dropped): on random entries (names with multi-byte characters or ASCII only, some fixed, the others picked per
 * answer) every answer is the JSON a plain join would give (byte for byte when the comma is dropped), with or without fixed entries, with an
 * end too long for the room kept for it; each answer's Response stays whole when the next one is
 * put together in the same place; single entries stay whole too.
 */
import { expect, test } from 'bun:test'
import { AnswerParts, encoder, type Bytes } from '../../../src/features/evaluation/answer-parts'
import { seededRandom } from '../../random'

const decoder = new TextDecoder()
const NAMES = ['a', 'flag-1', 'ünïcödé', '旗', 'emoji-🚩', 'quote"d', 'x'.repeat(300)]
/** Entries all ASCII are encoded in one call, others one by one: seed 5 has only these. */
const ASCII_NAMES = ['a', 'flag-1', 'quote"d', 'x'.repeat(300)]

function entryText(key: string, value: unknown, reason: string): string {
  return `,${JSON.stringify({ key, value, reason, metadata: { project: 'default' } })}`
}

const BULK_END = encoder.encode(']}') as Bytes

for (const [seed, first] of [1, 2, 3, 4, 5, 6, 7].map(seed => [seed, seed > 5 ? 'drop' : 'space'] as const)) {
  test(`answers equal a plain join of their entries, on random entries (seed ${seed}, first comma: ${first})`, async () => {
    const { int, pick, chance } = seededRandom(seed)
    const entries = new AnswerParts('{"flags":[', first)
    // Flags with two to four possible entries each; some flags are fixed (one entry, always the same).
    const flags: { ids: number[]; texts: string[]; fixed: boolean }[] = []
    const flagCount = seed === 1 || seed === 6 ? 0 : int(1, 40)
    for (let n = 0; n < flagCount; n++) {
      const key = `${pick(seed === 5 ? ASCII_NAMES : NAMES)}-${n}`
      const fixed = seed === 2 ? false : chance(0.4)
      const texts = Array.from({ length: fixed ? 1 : int(2, 4) }, (_, k) =>
        entryText(
          key,
          k % 2 === 0 ? true : pick(seed === 5 ? ASCII_NAMES : NAMES),
          pick(['STATIC', 'SPLIT', 'DISABLED']),
        ),
      )
      flags.push({ ids: texts.map(text => entries.add(text)), texts, fixed })
    }
    const fixedFlags = flags.filter(flag => flag.fixed)
    const evaluated = flags.filter(flag => !flag.fixed)
    entries.seal(
      fixedFlags.map(flag => flag.ids[0]),
      evaluated.map(flag => [flag.ids[0], flag.ids.at(-1)! + 1] as const),
    )
    const longEnd = encoder.encode(
      `],"eventStreams":${JSON.stringify([{ type: 'sse', endpoint: { requestUri: `/${'p'.repeat(3000)}/ofrep/v1/events` } }])}}`,
    ) as Bytes
    const ids = new Int32Array(evaluated.length)
    const responses: { response: Response; expected: string }[] = []
    for (let answer = 0; answer < 30; answer++) {
      const texts = fixedFlags.map(flag => flag.texts[0])
      evaluated.forEach((flag, index) => {
        const chosen = int(0, flag.ids.length - 1)
        ids[index] = flag.ids[chosen]
        texts.push(flag.texts[chosen])
      })
      const end = answer % 3 === 2 ? longEnd : BULK_END
      const expected = `{"flags":[${texts.join('').slice(1)}${decoder.decode(end)}`
      const response = new Response(entries.join(ids, ids.length, end))
      responses.push({ response, expected })
    }
    // Each Response copied its answer: none changed when the later ones were put together.
    for (const { response, expected } of responses) {
      const text = await response.text()
      if (first === 'drop') expect(text).toBe(expected)
      else expect(JSON.parse(text)).toEqual(JSON.parse(expected))
    }
    // A single flag's entry, untouched by the answers.
    for (const flag of flags)
      for (const [k, id] of flag.ids.entries()) expect(decoder.decode(entries.alone(id))).toBe(flag.texts[k].slice(1))
  })
}
