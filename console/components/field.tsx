/**
 * Form fields with their labels: `TextField` (a labelled input, a hint and the field's own error)
 * and `Picker` for a value from a known set (context fields, operators in words, stickiness,
 * segments, projects, environments, event types, people). A Picker is a <select>; with `free` it is
 * a text input suggesting the known values (a combobox), for sets that may also take new ones.
 */
import type { ComponentChildren } from 'preact'
import { useId } from 'preact/hooks'

export interface Option {
  value: string
  /** What a person reads; the value when absent. */
  label?: string
}

export function Field({
  label,
  hint,
  error,
  children,
  class: className,
}: {
  label: ComponentChildren
  hint?: ComponentChildren
  error?: string | null
  children: ComponentChildren
  class?: string
}) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is among the children
    <label class={`field${className ? ` ${className}` : ''}`}>
      <span class="field-label">{label}</span>
      {children}
      {hint && <small class="field-hint">{hint}</small>}
      {error && (
        <small class="field-error" role="alert">
          {error}
        </small>
      )}
    </label>
  )
}

export function TextField({
  label,
  hint,
  error,
  value,
  onValue,
  type = 'text',
  ...rest
}: {
  label: ComponentChildren
  hint?: ComponentChildren
  error?: string | null
  value: string
  onValue: (value: string) => void
  type?: 'text' | 'password' | 'number' | 'date' | 'datetime-local' | 'email' | 'search' | 'url'
  required?: boolean
  disabled?: boolean
  placeholder?: string
  autocomplete?: string
  name?: string
  min?: string
  max?: string
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      <input
        class="input"
        aria-invalid={error ? 'true' : undefined}
        value={value}
        onInput={event => onValue(event.currentTarget.value)}
        {...rest}
        type={type as 'text'}
      />
    </Field>
  )
}

const asOptions = (options: readonly (string | Option)[]): Option[] =>
  options.map(option => (typeof option === 'string' ? { value: option } : option))

export function Picker({
  label,
  value,
  options,
  onChange,
  placeholder,
  free = false,
  disabled,
  required,
  hint,
  class: className,
}: {
  label: ComponentChildren
  value: string
  options: readonly (string | Option)[]
  onChange: (value: string) => void
  /** The empty choice's text (e.g. "All projects"); without it there is no empty choice. */
  placeholder?: string
  /** Also accepts a value outside `options` (typed), suggesting the known ones. */
  free?: boolean
  disabled?: boolean
  required?: boolean
  hint?: ComponentChildren
  class?: string
}) {
  const listId = useId()
  const choices = asOptions(options)
  return (
    <Field label={label} hint={hint} class={className}>
      {free ? (
        <>
          <input
            class="input"
            list={listId}
            value={value}
            placeholder={placeholder}
            disabled={disabled}
            required={required}
            autocomplete="off"
            onInput={event => onChange(event.currentTarget.value)}
          />
          {/* Options without text: text inside the label would become part of the input's name. */}
          <datalist id={listId}>
            {choices.map(option => (
              <option key={option.value} value={option.value} label={option.label} />
            ))}
          </datalist>
        </>
      ) : (
        <select
          class="input"
          value={value}
          disabled={disabled}
          required={required}
          onChange={event => onChange(event.currentTarget.value)}
        >
          {placeholder !== undefined && <option value="">{placeholder}</option>}
          {!choices.some(option => option.value === value) && value !== '' && <option value={value}>{value}</option>}
          {choices.map(option => (
            <option key={option.value} value={option.value}>
              {option.label ?? option.value}
            </option>
          ))}
        </select>
      )}
    </Field>
  )
}
