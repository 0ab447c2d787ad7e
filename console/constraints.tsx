/** One constraint of a strategy or a segment: context field, any of the 19 operators, values, case, inversion. */
import type { Constraint } from './api'

const OPERATORS = [
  'IN',
  'NOT_IN',
  'STR_CONTAINS',
  'STR_STARTS_WITH',
  'STR_ENDS_WITH',
  'NUM_EQ',
  'NUM_GT',
  'NUM_GTE',
  'NUM_LT',
  'NUM_LTE',
  'DATE_AFTER',
  'DATE_BEFORE',
  'SEMVER_EQ',
  'SEMVER_GT',
  'SEMVER_LT',
  'SEMVER_GTE',
  'SEMVER_LTE',
  'REGEX',
  'IN_CIDR',
]
const SINGLE_VALUE = (operator: string) => /^(NUM_|DATE_|SEMVER_|REGEX)/.test(operator)

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
  const single = SINGLE_VALUE(value.operator)
  const text = single ? (value.value ?? '') : (value.values ?? []).join(', ')
  return (
    <fieldset class="constraint">
      <legend>Constraint {index + 1}</legend>
      <label>
        Context field
        <input value={value.contextName} onInput={e => onChange({ ...value, contextName: e.currentTarget.value })} />
      </label>
      <label>
        Operator
        <select
          value={value.operator}
          onChange={e => {
            const operator = e.currentTarget.value
            const values = SINGLE_VALUE(operator)
              ? { value: text.split(',')[0]?.trim() ?? '', values: undefined }
              : {
                  values: text
                    .split(',')
                    .map(part => part.trim())
                    .filter(Boolean),
                  value: undefined,
                }
            onChange({ ...value, operator, ...values })
          }}
        >
          {OPERATORS.map(operator => (
            <option key={operator}>{operator}</option>
          ))}
        </select>
      </label>
      <label>
        {single ? 'Value' : 'Values (comma-separated)'}
        <input
          value={text}
          onInput={e => {
            const raw = e.currentTarget.value
            onChange(
              single
                ? { ...value, value: raw }
                : {
                    ...value,
                    values: raw
                      .split(',')
                      .map(part => part.trim())
                      .filter(Boolean),
                  },
            )
          }}
        />
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={!!value.caseInsensitive}
          onChange={e => onChange({ ...value, caseInsensitive: e.currentTarget.checked })}
        />{' '}
        Case-insensitive
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={!!value.inverted}
          onChange={e => onChange({ ...value, inverted: e.currentTarget.checked })}
        />{' '}
        Inverted
      </label>
      <button type="button" onClick={onRemove}>
        Remove constraint {index + 1}
      </button>
    </fieldset>
  )
}
