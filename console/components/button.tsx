/** Buttons in four variants: primary (the page's main action), secondary, danger, ghost (toolbars, icons). */
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact'
import { Icon, type IconNode } from './icon'

export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'ghost'

export type ButtonProps = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'icon' | 'size'> & {
  variant?: ButtonVariant
  size?: 'sm' | 'md'
  /** An icon before the text; an icon-only button needs `aria-label`. */
  icon?: IconNode
  children?: ComponentChildren
}

export function Button({
  variant = 'secondary',
  size = 'md',
  icon,
  children,
  type,
  class: className,
  ...rest
}: ButtonProps) {
  return (
    <button
      type={type ?? 'button'}
      class={`btn btn-${variant}${size === 'sm' ? ' btn-sm' : ''}${children ? '' : ' btn-icon'}${className ? ` ${className}` : ''}`}
      {...rest}
    >
      {icon && <Icon icon={icon} size={size === 'sm' ? 14 : 16} />}
      {children}
    </button>
  )
}
