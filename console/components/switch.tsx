/**
 * An on/off switch: a real checkbox with role="switch" (keyboard, forms and screen readers for free),
 * drawn as a track and thumb by CSS. Its accessible name is `label`, e.g. "<flag> in <environment>".
 */
export function Switch({
  label,
  checked,
  disabled,
  onChange,
  showLabel = false,
}: {
  label: string
  checked: boolean
  disabled?: boolean
  onChange: (checked: boolean) => void
  /** Writes the label beside the switch; otherwise it is the accessible name only. */
  showLabel?: boolean
}) {
  const input = (
    <input
      type="checkbox"
      role="switch"
      class="switch"
      aria-label={showLabel ? undefined : label}
      checked={checked}
      aria-checked={checked}
      disabled={disabled}
      onChange={event => onChange(event.currentTarget.checked)}
    />
  )
  return showLabel ? (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the input above
    <label class="switch-field">
      {input}
      <span>{label}</span>
    </label>
  ) : (
    input
  )
}
