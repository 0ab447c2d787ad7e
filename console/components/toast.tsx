/**
 * Toasts: short messages at the corner of the screen, the server's own words when it refused
 * something. Called from anywhere (`toast.error(message)`, `toast.success(message)`), shown by the
 * one <Toaster /> the shell renders. Errors are announced at once (role="alert") and stay until
 * closed or 10 s; others are polite and go after 5 s (8 s with an action). A toast may carry one
 * action (e.g. Undo). While the pointer is over the toasts or focus is in them, they stay; their
 * time starts again once both have left.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
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
/** Each toast's dismissal while it runs, and what holds the toasts (then none runs). */
const timers = new Map<number, ReturnType<typeof setTimeout>>()
const holders = new Set<'pointer' | 'focus'>()
const listeners = new Set<(items: ToastItem[]) => void>()
const publish = () => {
  for (const listener of listeners) listener(items)
}

export function dismiss(id: number) {
  clearTimeout(timers.get(id))
  timers.delete(id)
  items = items.filter(item => item.id !== id)
  publish()
}

function schedule(item: ToastItem) {
  const lasts = item.kind === 'error' ? 10_000 : item.action ? 8_000 : 5_000
  timers.set(
    item.id,
    setTimeout(() => dismiss(item.id), lasts),
  )
}

/** The pointer or focus came into (`on`) or left the toasts: held, none goes; let go, each has its whole time again. */
function hold(by: 'pointer' | 'focus', on: boolean) {
  if (on) holders.add(by)
  else holders.delete(by)
  if (holders.size > 0) {
    for (const timer of timers.values()) clearTimeout(timer)
    timers.clear()
  } else for (const item of items) if (!timers.has(item.id)) schedule(item)
}

function show(kind: ToastKind, message: string, action?: ToastItem['action']): number {
  const id = next++
  const item = { id, kind, message, action }
  // At most five at once: the oldest go first.
  for (const old of items.slice(0, -4)) dismiss(old.id)
  items = [...items, item]
  publish()
  if (holders.size === 0) schedule(item)
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
  const region = useRef<HTMLElement>(null)
  useEffect(() => {
    listeners.add(setShown)
    return () => void listeners.delete(setShown)
  }, [])
  // A focused toast that goes (closed, or its action taken) takes the focus with it, without a focusout.
  useEffect(() => {
    if (holders.has('focus') && !region.current?.contains(document.activeElement)) hold('focus', false)
  }, [shown])
  return (
    <section
      ref={region}
      class="toasts"
      aria-label="Notifications"
      onMouseEnter={() => hold('pointer', true)}
      onMouseLeave={() => hold('pointer', false)}
      onFocusIn={() => hold('focus', true)}
      onFocusOut={event => hold('focus', region.current?.contains(event.relatedTarget as Node | null) ?? false)}
    >
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
