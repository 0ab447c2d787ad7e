/**
 * Constraints: the operators in words, the kinds of value each compares, the one-line chip a page
 * shows for a constraint ("country is one of NO, SE"), and the editor of one constraint, whose
 * context field is picked from the defined ones, whose operators fit that field and whose values
 * come from the field's legal values when it has some.
 */
import { useEffect, useId, useState } from 'preact/hooks'
import { get, type Constraint } from './api'
import { Picker } from './ui'
import './pages.css'

export type Kind = 'text' | 'number' | 'date' | 'version'

interface OperatorInfo {
  kind: Kind
  /** Compares with one `value`; the others take a `values` list. */
  single: boolean
  /** The phrase, and the phrase when inverted. */
  yes: string
  no: string
}

export const OPERATORS: Record<string, OperatorInfo> = {
  IN: { kind: 'text', single: false, yes: 'is one of', no: 'is not one of' },
  NOT_IN: { kind: 'text', single: false, yes: 'is not one of', no: 'is one of' },
  STR_CONTAINS: { kind: 'text', single: false, yes: 'contains', no: 'does not contain' },
  STR_STARTS_WITH: { kind: 'text', single: false, yes: 'starts with', no: 'does not start with' },
  STR_ENDS_WITH: { kind: 'text', single: false, yes: 'ends with', no: 'does not end with' },
  REGEX: { kind: 'text', single: true, yes: 'matches the pattern', no: 'does not match the pattern' },
  IN_CIDR: { kind: 'text', single: false, yes: 'is in the address range', no: 'is not in the address range' },
  NUM_EQ: { kind: 'number', single: true, yes: 'equals', no: 'does not equal' },
  NUM_GT: { kind: 'number', single: true, yes: 'is greater than', no: 'is not greater than' },
  NUM_GTE: { kind: 'number', single: true, yes: 'is at least', no: 'is less than' },
  NUM_LT: { kind: 'number', single: true, yes: 'is less than', no: 'is at least' },
  NUM_LTE: { kind: 'number', single: true, yes: 'is at most', no: 'is greater than' },
  DATE_AFTER: { kind: 'date', single: true, yes: 'is after', no: 'is not after' },
  DATE_BEFORE: { kind: 'date', single: true, yes: 'is before', no: 'is not before' },
  SEMVER_EQ: { kind: 'version', single: true, yes: 'is version', no: 'is not version' },
  SEMVER_GT: { kind: 'version', single: true, yes: 'is a version after', no: 'is not a version after' },
  SEMVER_GTE: { kind: 'version', single: true, yes: 'is version or after', no: 'is a version before' },
  SEMVER_LT: { kind: 'version', single: true, yes: 'is a version before', no: 'is not a version before' },
  SEMVER_LTE: { kind: 'version', single: true, yes: 'is version or before', no: 'is a version after' },
}

const KIND_NAMES: Record<Kind, string> = { text: 'Text', number: 'Number', date: 'Date and time', version: 'Version' }

export interface ContextField {
  name: string
  description?: string
  stickiness: boolean
  legalValues: { value: string; description?: string }[]
}

const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/

/**
 * The kinds of comparison a field allows. Date operators always compare the context's current time
 * (the SDKs ignore the field's name for them), so only currentTime offers them, and only them; a
 * field whose legal values are all numbers or all versions is compared as those (or as text).
 */
export function kindsOf(field: string, legal: string[]): Kind[] {
  if (field === 'currentTime') return ['date']
  if (legal.length > 0 && legal.every(value => NUMBER.test(value))) return ['number', 'text']
  if (legal.length > 0 && legal.every(value => SEMVER.test(value))) return ['version', 'text']
  if (legal.length > 0) return ['text']
  return ['text', 'number', 'version']
}

/** Why a single value does not fit its operator (the service says so too), or null. */
export function valueProblem(operator: string, value: string): string | null {
  const kind = OPERATORS[operator]?.kind
  if (value === '') return 'A value is needed'
  if (kind === 'number' && !NUMBER.test(value.trim())) return 'Not a number'
  if (kind === 'version' && !SEMVER.test(value)) return 'Not a version such as 1.2.3'
  if (kind === 'date' && Number.isNaN(Date.parse(value))) return 'Not a date and time'
  return null
}

const whenText = (value: string) => (Number.isNaN(Date.parse(value)) ? value : new Date(value).toLocaleString())

/** "country is one of NO, SE", "email ends with @a.com or @b.com", "currentTime is after 1/2/2026, 10:00:00". */
export function describeConstraint(constraint: Constraint): string {
  const info = OPERATORS[constraint.operator]
  const phrase = info
    ? constraint.inverted
      ? info.no
      : info.yes
    : `${constraint.inverted ? 'NOT ' : ''}${constraint.operator}`
  const values = info?.single
    ? info.kind === 'date'
      ? whenText(constraint.value ?? '')
      : (constraint.value ?? '')
    : (constraint.values ?? []).join(constraint.operator.startsWith('STR_') ? ' or ' : ', ')
  const anyCase = constraint.caseInsensitive && constraint.operator.startsWith('STR_') ? ' (any case)' : ''
  return `${constraint.contextName} ${phrase} ${values}${anyCase}`
}

export function ConstraintChips({ constraints }: { constraints: Constraint[] }) {
  if (constraints.length === 0) return null
  return (
    <ul class="chips" aria-label="Constraints">
      {constraints.map((constraint, index) => (
        <li class="chip" key={index}>
          {describeConstraint(constraint)}
        </li>
      ))}
    </ul>
  )
}

let fieldsCache: { at: number; fields: Promise<ContextField[]> } | null = null

/** The defined context fields, asked once for the editors shown together (again after a few seconds). */
export function useContextFields(): ContextField[] {
  const [fields, setFields] = useState<ContextField[]>([])
  useEffect(() => {
    if (!fieldsCache || Date.now() - fieldsCache.at > 5000)
      fieldsCache = { at: Date.now(), fields: get<ContextField[]>('/api/admin/context').catch(() => []) }
    let live = true
    fieldsCache.fields.then(list => live && setFields(list))
    return () => {
      live = false
    }
  }, [])
  return fields
}

const toLocalInput = (iso: string) => {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return ''
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}

export function ConstraintEditor({
  value,
  onChange,
  onRemove,
  index,
}: {
  value: Constraint
  onChange: (next: Constraint) => void
  onRemove: () => void
  index: number
}) {
  const fields = useContextFields()
  const field = fields.find(entry => entry.name === value.contextName)
  const legal = (field?.legalValues ?? []).map(entry => entry.value)
  const kinds = kindsOf(value.contextName, legal)
  const info = OPERATORS[value.operator] ?? OPERATORS.IN!
  const idBase = useId()
  const names = fields.map(entry => entry.name)
  if (!names.includes(value.contextName)) names.unshift(value.contextName)
  const chooseField = (name: string) => {
    const next = fields.find(entry => entry.name === name)
    const nextKinds = kindsOf(
      name,
      (next?.legalValues ?? []).map(entry => entry.value),
    )
    const operator =
      nextKinds.includes(info.kind) && name !== 'currentTime'
        ? value.operator
        : nextKinds[0] === 'date'
          ? 'DATE_AFTER'
          : 'IN'
    onChange({
      ...value,
      contextName: name,
      operator,
      values: OPERATORS[operator]!.single ? undefined : [],
      value: OPERATORS[operator]!.single ? '' : undefined,
    })
  }
  const chooseOperator = (operator: string) => {
    const single = OPERATORS[operator]!.single
    const first = value.value ?? value.values?.[0] ?? ''
    onChange({
      ...value,
      operator,
      ...(single
        ? { value: first, values: undefined }
        : { values: value.values ?? (first ? [first] : []), value: undefined }),
      caseInsensitive: operator.startsWith('STR_') ? value.caseInsensitive : false,
    })
  }
  const problem = info.single ? valueProblem(value.operator, value.value ?? '') : null
  const single = value.value ?? ''
  return (
    <fieldset class="constraint">
      <legend>Constraint {index + 1}</legend>
      <div class="constraint-row">
        <Picker label="Context field" value={value.contextName} options={names} onChange={chooseField} />
        <label>
          Operator
          <select value={value.operator} onChange={e => chooseOperator(e.currentTarget.value)}>
            {kinds.map(kind => (
              <optgroup key={kind} label={KIND_NAMES[kind]}>
                {Object.entries(OPERATORS)
                  .filter(([operator, entry]) => entry.kind === kind && (operator !== 'IN_CIDR' || legal.length === 0))
                  .map(([operator, entry]) => (
                    <option key={operator} value={operator}>
                      {entry.yes}
                    </option>
                  ))}
              </optgroup>
            ))}
          </select>
        </label>
        {!info.single && legal.length > 0 && (
          <fieldset class="legal-values">
            <legend>Values</legend>
            {field!.legalValues.map(entry => (
              <label class="check" key={entry.value}>
                <input
                  type="checkbox"
                  checked={(value.values ?? []).includes(entry.value)}
                  onChange={e =>
                    onChange({
                      ...value,
                      values: e.currentTarget.checked
                        ? [...(value.values ?? []), entry.value]
                        : (value.values ?? []).filter(chosen => chosen !== entry.value),
                    })
                  }
                />{' '}
                {entry.value}
                {entry.description ? <span class="muted"> ({entry.description})</span> : null}
              </label>
            ))}
          </fieldset>
        )}
        {!info.single && legal.length === 0 && (
          <label>
            Values (comma-separated)
            <input
              value={(value.values ?? []).join(', ')}
              onInput={e =>
                onChange({
                  ...value,
                  values: e.currentTarget.value
                    .split(',')
                    .map(part => part.trim())
                    .filter(Boolean),
                })
              }
            />
          </label>
        )}
        {info.single && legal.length > 0 && info.kind !== 'text' ? (
          <Picker
            label="Value"
            value={single}
            options={legal}
            placeholder="Choose a value"
            onChange={next => onChange({ ...value, value: next })}
          />
        ) : info.single ? (
          <label>
            Value
            <input
              type={(info.kind === 'date' ? 'datetime-local' : 'text') as 'text'}
              inputMode={info.kind === 'number' ? 'decimal' : undefined}
              value={info.kind === 'date' ? toLocalInput(single) : single}
              aria-invalid={problem ? 'true' : 'false'}
              aria-describedby={problem ? `${idBase}-problem` : undefined}
              onInput={e => {
                const raw = e.currentTarget.value
                const next = info.kind === 'date' && raw ? new Date(raw).toISOString() : raw
                onChange({ ...value, value: next })
              }}
            />
          </label>
        ) : null}
      </div>
      {problem && single !== '' && (
        <p class="field-problem" id={`${idBase}-problem`}>
          {problem}
        </p>
      )}
      <div class="constraint-row">
        {value.operator.startsWith('STR_') && (
          <label class="check">
            <input
              type="checkbox"
              checked={!!value.caseInsensitive}
              onChange={e => onChange({ ...value, caseInsensitive: e.currentTarget.checked })}
            />{' '}
            Ignore case
          </label>
        )}
        <label class="check">
          <input
            type="checkbox"
            checked={!!value.inverted}
            onChange={e => onChange({ ...value, inverted: e.currentTarget.checked })}
          />{' '}
          Negate (not)
        </label>
        <output class="chip" aria-label={`Constraint ${index + 1} reads`}>
          {describeConstraint(value)}
        </output>
        <button type="button" onClick={onRemove}>
          Remove constraint {index + 1}
        </button>
      </div>
    </fieldset>
  )
}
