/** What an empty list shows: what it would hold, and what to do next (a sentence, and a button or link). */
import type { ComponentChildren } from 'preact'
import { Icon, type IconNode } from './icon'

export function EmptyState({
  icon,
  title,
  children,
  action,
}: {
  icon?: IconNode
  title: string
  /** The next step, in words. */
  children?: ComponentChildren
  /** A button or link that takes it. */
  action?: ComponentChildren
}) {
  return (
    <div class="empty-state">
      {icon && <Icon icon={icon} size={32} />}
      <p class="empty-title">{title}</p>
      {children && <p class="muted">{children}</p>}
      {action && <div class="empty-action">{action}</div>}
    </div>
  )
}
