/**
 * Icons from lucide (a maintained set): each icon is imported by name where it is used
 * (`import { Sun } from 'lucide'`), so the bundle keeps only those. Decorative unless `label` names it.
 */
import type { IconNode } from 'lucide'
import { h } from 'preact'

export type { IconNode }

export function Icon({
  icon,
  size = 16,
  label,
  class: className,
}: {
  icon: IconNode
  size?: number
  label?: string
  class?: string
}) {
  return (
    <svg
      class={`icon${className ? ` ${className}` : ''}`}
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden={label ? undefined : 'true'}
      role={label ? 'img' : undefined}
      aria-label={label}
      focusable="false"
    >
      {icon.map(([tag, attributes], index) => h(tag, { key: index, ...attributes }))}
    </svg>
  )
}
