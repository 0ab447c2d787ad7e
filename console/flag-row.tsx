/**
 * One row of the flags list (flags.tsx): a checkbox to select it, its name and (beyond a phone) its
 * description cut to one line, its facts, one switch per environment.
 */
import { enc, type Flag } from './api'
import { Switch } from './components/switch'
import { when } from './ui'

/** Every row is this tall, so the list knows which rows are in view without drawing the others. */
export const ROW_HEIGHT = 40

export function FlagRow({
  flag,
  index,
  project,
  canWrite,
  selected,
  onSelect,
  toggle,
}: {
  flag: Flag
  /** Its place in the whole list (aria-rowindex counts the header row as 1). */
  index: number
  /** The project listed; undefined when the list is every project's. */
  project?: string
  canWrite: boolean
  selected: boolean
  onSelect: () => void
  toggle: (flag: Flag, environment: string, enabled: boolean) => void
}) {
  return (
    <tr aria-rowindex={index + 2} style={{ height: `${ROW_HEIGHT}px` }}>
      {project && (
        <td>
          <input
            type="checkbox"
            aria-label={`Select ${flag.name}`}
            checked={selected}
            disabled={!canWrite}
            onChange={onSelect}
          />
        </td>
      )}
      <td>
        <a href={`#/projects/${enc(flag.project)}/features/${enc(flag.name)}`}>{flag.name}</a>
        {flag.description && (
          <span class="row-description" title={flag.description}>
            {flag.description}
          </span>
        )}
      </td>
      {!project && <td>{flag.project}</td>}
      <td class="hide-phone">{flag.type}</td>
      <td class="hide-phone">{flag.stale && <span class="badge badge-warning">stale</span>}</td>
      <td class="hide-phone">{when(flag.lastSeenAt)}</td>
      <td class="hide-phone">{when(flag.createdAt)}</td>
      {project ? (
        flag.environments.map(entry => (
          <td key={entry.name}>
            <Switch
              label={`${flag.name} in ${entry.name}`}
              checked={entry.enabled}
              disabled={!canWrite}
              onChange={checked => toggle(flag, entry.name, checked)}
            />
          </td>
        ))
      ) : (
        <td>
          {flag.environments.map(entry => (
            <span class="env-switch" key={entry.name}>
              <Switch
                label={`${flag.name} in ${entry.name}`}
                checked={entry.enabled}
                disabled={!canWrite}
                onChange={checked => toggle(flag, entry.name, checked)}
              />
              <span aria-hidden="true">{entry.name}</span>
            </span>
          ))}
        </td>
      )}
    </tr>
  )
}
