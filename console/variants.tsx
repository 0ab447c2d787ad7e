/**
 * A flag's variants in one environment. Weights are shares of 1000: a variant with a custom weight
 * keeps it, the others share what is left equally, by the service's own rule (sorted by name, the
 * first ones taking the remainder), so the bar drawn here is exactly what saving stores and it
 * always adds up to 100 %. Nothing changes a weight behind the user's back: adding a variant keeps
 * every custom weight, and each shared weight is shown as it is recomputed. Payloads are typed
 * (string, json, csv, number) and checked as such before saving.
 */
import { useState } from 'preact/hooks'
import { call, enc, type Flag, type FlagEnvironment, type Variant } from './api'
import { Button, ErrorLine, Picker } from './ui'
import { StickinessPicker } from './strategy'
import './pages.css'

const TOTAL = 1000

/** The weights saving would store, or why it cannot be saved. */
export function distribute(variants: Variant[]): { weights: number[] } | { problem: string } {
  const fixed = variants.filter(v => v.weightType === 'fix').reduce((sum, v) => sum + v.weight, 0)
  const variable = variants.filter(v => v.weightType !== 'fix')
  if (fixed > TOTAL) return { problem: `Custom weights add up to ${fixed / 10} %, more than 100 %` }
  if (variants.length > 0 && variable.length === 0 && fixed !== TOTAL)
    return { problem: `With only custom weights they must add up to 100 %, not ${fixed / 10} %` }
  const share = variable.length ? Math.floor((TOTAL - fixed) / variable.length) : 0
  let extra = variable.length ? (TOTAL - fixed) % variable.length : 0
  const byName = new Map<Variant, number>()
  for (const variant of [...variable].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    byName.set(variant, share + (extra > 0 ? 1 : 0))
    if (extra > 0) extra--
  }
  return { weights: variants.map(v => (v.weightType === 'fix' ? v.weight : byName.get(v)!)) }
}

/** Why a payload's text is not of its type, or null. */
export function payloadProblem(type: string, value: string): string | null {
  if (value === '') return null
  if (type === 'json') {
    try {
      JSON.parse(value)
    } catch {
      return 'Not valid JSON'
    }
  }
  if (type === 'number' && !/^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(value.trim())) return 'Not a number'
  if (type === 'csv') return csvProblem(value)
  return null
}

/** A CSV text: quotes closed, and every line with as many fields as the first. */
function csvProblem(text: string): string | null {
  const counts: number[] = []
  let fields = 1
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') i++
      else if (c === '"') quoted = false
    } else if (c === '"') quoted = true
    else if (c === ',') fields++
    else if (c === '\n') {
      counts.push(fields)
      fields = 1
    }
  }
  if (quoted) return 'A quoted field is not closed'
  if (!text.endsWith('\n')) counts.push(fields)
  const bad = counts.findIndex(count => count !== counts[0])
  return bad === -1 ? null : `Line ${bad + 1} has ${counts[bad]} fields, line 1 has ${counts[0]}`
}

const PAYLOAD_TYPES = [
  { value: 'string', label: 'Text' },
  { value: 'json', label: 'JSON' },
  { value: 'csv', label: 'CSV' },
  { value: 'number', label: 'Number' },
]

const percent = (weight: number) => `${(weight / 10).toLocaleString(undefined, { maximumFractionDigits: 1 })} %`

export function Variants({
  flag,
  environment,
  canWrite,
  reload,
}: {
  flag: Flag
  environment: FlagEnvironment
  canWrite: boolean
  reload: () => void
}) {
  const [variants, setVariants] = useState<Variant[]>(environment.variants ?? [])
  const [error, setError] = useState<unknown>(null)
  const split = distribute(variants)
  const problems = variants.map(v => payloadProblem(v.payload?.type ?? 'string', v.payload?.value ?? ''))
  const names = variants.map(v => v.name.trim())
  const duplicate = names.find((name, at) => names.indexOf(name) !== at)
  const blocker =
    'problem' in split
      ? split.problem
      : duplicate !== undefined
        ? `Two variants are named "${duplicate}"`
        : problems.some(Boolean)
          ? 'A payload is not of its type'
          : null
  const changed = JSON.stringify(variants) !== JSON.stringify(environment.variants ?? [])
  const save = async () => {
    try {
      await call('PUT', `/api/admin/projects/${enc(flag.project)}/features/${enc(flag.name)}/variants-batch`, {
        // A payload type chosen with no payload text is no payload.
        variants: variants.map(({ payload, ...rest }) => (payload?.value ? { ...rest, payload } : rest)),
        environments: [environment.name],
      })
      setError(null)
      reload()
    } catch (failure) {
      setError(failure)
    }
  }
  const change = (index: number, next: Partial<Variant>) =>
    setVariants(variants.map((variant, at) => (at === index ? { ...variant, ...next } : variant)))
  const weights = 'weights' in split ? split.weights : null
  return (
    <div class="variants">
      <h4>Variants in {environment.name}</h4>
      {variants.length === 0 && <p class="muted">No variants: the flag answers on or off only.</p>}
      {weights && variants.length > 0 && (
        <ol class="weight-bar" aria-label={`Variant weights in ${environment.name}, 100 % in all`}>
          {variants.map((variant, index) => (
            <li
              key={index}
              class={`weight-part part-${index % 6}`}
              style={{ flexGrow: weights[index]! }}
              title={`${variant.name} ${percent(weights[index]!)}`}
            >
              {variant.name} {percent(weights[index]!)}
            </li>
          ))}
        </ol>
      )}
      {variants.map((variant, index) => (
        <fieldset key={index} class="variant">
          <legend>Variant {index + 1}</legend>
          <label>
            Variant name{' '}
            <input
              value={variant.name}
              disabled={!canWrite}
              onInput={e => change(index, { name: e.currentTarget.value })}
            />
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={variant.weightType === 'fix'}
              disabled={!canWrite}
              onChange={e =>
                change(index, {
                  weightType: e.currentTarget.checked ? 'fix' : 'variable',
                  weight: weights?.[index] ?? variant.weight,
                })
              }
            />{' '}
            Custom weight
          </label>
          {variant.weightType === 'fix' ? (
            <label>
              Weight (%)
              <input
                type="number"
                min="0"
                max="100"
                step="0.1"
                value={variant.weight / 10}
                disabled={!canWrite}
                onInput={e => change(index, { weight: Math.round(Number(e.currentTarget.value) * 10) })}
              />
            </label>
          ) : (
            <p class="muted share">Shares the rest: {weights ? percent(weights[index]!) : '—'}</p>
          )}
          <StickinessPicker
            label="Variant stickiness"
            value={variant.stickiness}
            disabled={!canWrite}
            onChange={stickiness => change(index, { stickiness })}
          />
          <Picker
            label="Payload type"
            value={variant.payload?.type ?? 'string'}
            disabled={!canWrite}
            options={PAYLOAD_TYPES}
            onChange={type => change(index, { payload: { type, value: variant.payload?.value ?? '' } })}
          />
          <label class="payload">
            Payload
            <textarea
              rows={variant.payload?.type === 'json' || variant.payload?.type === 'csv' ? 3 : 1}
              value={variant.payload?.value ?? ''}
              disabled={!canWrite}
              aria-invalid={problems[index] ? 'true' : 'false'}
              onInput={e => {
                const value = e.currentTarget.value
                change(index, {
                  payload: value === '' ? undefined : { type: variant.payload?.type ?? 'string', value },
                })
              }}
            />
          </label>
          {problems[index] && (
            <p class="field-problem" role="alert">
              Payload of {variant.name}: {problems[index]}
            </p>
          )}
          {canWrite && (
            <button type="button" onClick={() => setVariants(variants.filter((_, at) => at !== index))}>
              Remove variant {index + 1}
            </button>
          )}
        </fieldset>
      ))}
      {'problem' in split && (
        <p class="field-problem" role="alert">
          {split.problem}
        </p>
      )}
      {canWrite && (
        <div class="actions">
          <button
            type="button"
            onClick={() =>
              setVariants([
                ...variants,
                {
                  name: nextName(variants),
                  weight: 0,
                  weightType: 'variable',
                  stickiness: variants[0]?.stickiness ?? 'default',
                },
              ])
            }
          >
            Add variant in {environment.name}
          </button>
          <Button variant="primary" disabled={!changed || blocker !== null} onClick={save}>
            Save variants in {environment.name}
          </Button>
          {changed && blocker && <span class="muted">{blocker}</span>}
        </div>
      )}
      <ErrorLine error={error} />
    </div>
  )
}

function nextName(variants: Variant[]): string {
  for (let n = variants.length + 1; ; n++) if (!variants.some(v => v.name === `variant-${n}`)) return `variant-${n}`
}
