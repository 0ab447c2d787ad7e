/** A create-or-edit form in a card, with Save and Cancel: `label` names it ("New segment", "Edit segment beta"). */
import type { ComponentChildren } from 'preact'
import { ErrorLine } from '../ui'
import { Button } from './button'

/** A comma-separated list typed by a person, as its trimmed, non-empty entries. */
export const split = (text: string) =>
  text
    .split(',')
    .map(part => part.trim())
    .filter(Boolean)

export function FormPanel({
  label,
  onSubmit,
  onCancel,
  error,
  children,
}: {
  label: string
  onSubmit: () => void
  onCancel: () => void
  error: unknown
  children: ComponentChildren
}) {
  return (
    <form class="panel" aria-label={label} onSubmit={event => (event.preventDefault(), onSubmit())}>
      <h2>{label}</h2>
      {children}
      <div class="modal-actions">
        <Button onClick={onCancel}>Cancel</Button>
        <Button type="submit" variant="primary">
          Save
        </Button>
      </div>
      <ErrorLine error={error} />
    </form>
  )
}
