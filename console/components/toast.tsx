/**
 * Toasts: short messages at the corner of the screen, the server's own words when it refused
 * something. Called from anywhere (`toast.error(message)`, `toast.success(message)`), shown by the
 * one <Toaster /> the shell renders. Errors are announced at once (role="alert") and stay until
 * closed or 10 s; others are polite and go after 5 s. A toast may carry one action (e.g. Undo).
 */
import { useEffect, useState } from 'preact/hooks'
import { CircleAlert, CircleCheck, Info, X } from 'lucide'
import { ApiError } from '../api'
import { Icon } from './icon'

export type ToastKind = 'error' | 'success' | 'info'

export interface ToastItem {
  id: number
  kind: ToastKind
  message: string
  action?: { label: string; run: () => void }
}

let items: ToastItem[] = []
let next = 1
const listeners = new Set<(items: ToastItem[]) => void>()
const publish = () => {
  for (const listener of listeners) listener(items)
}

export function dismiss(id: number) {
  items = items.filter(item => item.id !== id)
  publish()
}

function show(kind: ToastKind, message: string, action?: ToastItem['action']): number {
  const id = next++
  // At most five at once: the oldest go first.
  items = [...items.slice(-4), { id, kind, message, action }]
  publish()
  setTimeout(() => dismiss(id), kind === 'error' ? 10_000 : action ? 8_000 : 5_000)
  return id
}

/** The words of a failure: an API error's message (with the field it names), or the error's text. */
export function messageOf(failure: unknown): string {
  if (failure instanceof ApiError) return failure.field ? `${failure.message} (${failure.field})` : failure.message
  return failure instanceof Error ? failure.message : String(failure)
}

export const toast = {
  error: (message: string | unknown) => show('error', typeof message === 'string' ? message : messageOf(message)),
  success: (message: string, action?: ToastItem['action']) => show('success', message, action),
  info: (message: string, action?: ToastItem['action']) => show('info', message, action),
  dismiss,
}

const ICONS = { error: CircleAlert, success: CircleCheck, info: Info }

export function Toaster() {
  const [shown, setShown] = useState(items)
  useEffect(() => {
    listeners.add(setShown)
    return () => void listeners.delete(setShown)
  }, [])
  return (
    <section class="toasts" aria-label="Notifications">
      {shown.map(item => (
        <div
          key={item.id}
          class={`toast toast-${item.kind}`}
          role={item.kind === 'error' ? 'alert' : 'status'}
          aria-live={item.kind === 'error' ? 'assertive' : 'polite'}
        >
          <Icon icon={ICONS[item.kind]} size={18} />
          <span class="toast-message">{item.message}</span>
          {item.action && (
            <button
              type="button"
              class="btn btn-ghost btn-sm"
              onClick={() => {
                item.action!.run()
                dismiss(item.id)
              }}
            >
              {item.action.label}
            </button>
          )}
          <button
            type="button"
            class="btn btn-ghost btn-sm btn-icon"
            aria-label="Close"
            onClick={() => dismiss(item.id)}
          >
            <Icon icon={X} size={14} />
          </button>
        </div>
      ))}
    </section>
  )
}
